// What llm-d's endpoint picker (llm-d-router v0.10.0) does with a request for precise prefix-cache routing, for
// tests that stand in for it:
// - its token-producer's render call (pkg/epp/framework/plugins/requestcontrol/dataproducer/tokenizer/vllm_http.go):
//   the body its openai-parser decoded into a Go map[string]any, `model` stamped with the plugin's `modelName`,
//   marshaled again by encoding/json (keys sorted at every level; <, >, & and U+2028/2029 escaped), POSTed with
//   `Content-Type: application/json` alone (no key) to `<vllm.url>/v1/chat/completions/render` or
//   `/v1/completions/render`; it reads `token_ids` (and `features`) of the object, or of each item of the list;
// - the request it forwards to the pod: the same map marshaled again, with the client's model (director.go,
//   `repackage`);
// - block keys (pkg/kvcache/kvblock/token_processor.go): FNV-64a over the canonical CBOR of
//   [parent, tokens, extra], chained from hash(FNV-64a(hashSeed), nil, model), full blocks only; the request's
//   keys from the rendered ids and the request's model, the index's keys from each BlockStored's `token_ids` and
//   the topic's model, chained to its parent's key (pkg/kvevents/pool.go).
import type { SubscribedBlock } from "./kv-subscriber.js";

const ESCAPES: Readonly<Record<string, string>> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** `value` as Go's json.Marshal writes it once decoded into `any`: object keys sorted, HTML characters escaped. */
export function goJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v === null || typeof v !== "object") return v;
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, inner]) => [k, sorted(inner)]));
  };
  return JSON.stringify(sorted(value)).replace(/[<>&\u2028\u2029]/g, (c) => ESCAPES[c] ?? c);
}

/** The token-producer's render call: `{status, json}` of `POST <baseUrl><path>` with the client's body. */
export async function renderAsPicker(
  baseUrl: string,
  path: "/v1/chat/completions/render" | "/v1/completions/render",
  clientBody: Readonly<Record<string, unknown>>,
  modelName: string,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl.replace(/\/+$/, "")}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: goJson({ ...clientBody, model: modelName }),
  });
  return { status: response.status, json: await response.json() };
}

const MASK = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;

function fnv64a(bytes: Uint8Array): bigint {
  let hash = FNV_OFFSET;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK;
  return hash;
}

/** A CBOR head in its shortest form (canonical CBOR): major type and argument. */
function head(major: number, value: bigint): number[] {
  const type = major << 5;
  if (value < 24n) return [type | Number(value)];
  // Additional information 24, 25, 26, 27: the argument follows in 1, 2, 4, 8 bytes.
  const [width, info] =
    value < 0x100n ? [1, 24] : value < 0x10000n ? [2, 25] : value < 0x100000000n ? [4, 26] : [8, 27];
  const out = [type | info];
  for (let i = width - 1; i >= 0; i--) out.push(Number((value >> BigInt(8 * i)) & 0xffn));
  return out;
}

/** Canonical CBOR of [parent, tokens (nil: null), extra (a string, or nil: null)], as fxamacker/cbor encodes it. */
function cborPayload(parent: bigint, tokens: readonly number[] | null, extra: string | null): Uint8Array {
  const out = [...head(4, 3n), ...head(0, parent)];
  if (tokens === null) out.push(0xf6);
  else {
    out.push(...head(4, BigInt(tokens.length)));
    for (const token of tokens) out.push(...head(0, BigInt(token)));
  }
  if (extra === null) out.push(0xf6);
  else {
    const text = new TextEncoder().encode(extra);
    out.push(...head(3, BigInt(text.length)), ...text);
  }
  return Uint8Array.from(out);
}

/** llm-d's chunkedTokenDatabase.hash. */
function llmdHash(parent: bigint, tokens: readonly number[] | null, extra: string | null): bigint {
  return fnv64a(cborPayload(parent, tokens, extra));
}

/** TokensToKVBlockKeys: the keys of the full blocks of `tokens`, chained from `parent` (none: the model's root). */
export function llmdBlockKeys(tokens: readonly number[], model: string, blockSize: number, parent?: bigint): bigint[] {
  let prefix = parent ?? llmdHash(fnv64a(new Uint8Array()), null, model);
  const keys: bigint[] = [];
  for (let end = blockSize; end <= tokens.length; end += blockSize) {
    prefix = llmdHash(prefix, tokens.slice(end - blockSize, end), null);
    keys.push(prefix);
  }
  return keys;
}

/**
 * The request keys the picker's index holds for a pod's blocks (a subscriber's view, keyed `<medium>:<engine hash>`):
 * each block's key chained to its parent's, found by the parent's engine hash, from the topic's model's root.
 */
export function indexKeys(view: ReadonlyMap<string, SubscribedBlock>, model: string, blockSize: number): Set<bigint> {
  const byHash = new Map<bigint, SubscribedBlock>([...view.values()].map((block) => [block.hash, block]));
  const keys = new Map<bigint, bigint | undefined>();
  const keyOf = (block: SubscribedBlock): bigint | undefined => {
    if (keys.has(block.hash)) return keys.get(block.hash);
    const parent = block.parent === undefined ? undefined : byHash.get(block.parent);
    // A parent the index does not hold: llm-d skips the event.
    const parentKey = parent === undefined ? undefined : keyOf(parent);
    const orphan = block.parent !== undefined && parentKey === undefined;
    const key = orphan ? undefined : llmdBlockKeys(block.tokens, model, blockSize, parentKey)[0];
    keys.set(block.hash, key);
    return key;
  };
  return new Set([...view.values()].map(keyOf).filter((key): key is bigint => key !== undefined));
}
