// Client API keys: `API_KEYS` is a comma-separated list of keys, or of `sha256:<hex>` digests of
// keys so a secret need not be stored in clear. A presented key is hashed and compared with every
// configured digest in constant time (docs/decisions.md, "Client keys"). A key is known in logs,
// metrics and stored objects only by its id: a short hex prefix of the SHA-256 of its digest,
// which cannot be turned back into the key.
import { fromHex, sha256, timingSafeEqual, toHex } from "./constant-time.js";

export interface ConfiguredKey {
  readonly digest: Uint8Array;
  readonly id: string;
}

/** How a presented digest is compared with a configured one (tests pass a spy). */
export type DigestCompare = (presented: Uint8Array, configured: Uint8Array) => boolean;

const SHA256_PREFIX = "sha256:";

async function idOf(digest: Uint8Array): Promise<string> {
  return `key_${toHex(await sha256(toHex(digest))).slice(0, 12)}`;
}

/** Parses `API_KEYS` (or `ADMIN_KEYS`); throws with the entry's position (never its text) when one is malformed. */
export async function parseApiKeys(text: string | undefined, setting = "API_KEYS"): Promise<ConfiguredKey[]> {
  const entries = (text ?? "").split(",").map((entry) => entry.trim());
  const keys: ConfiguredKey[] = [];
  for (const [index, entry] of entries.entries()) {
    if (entry === "") continue;
    let digest: Uint8Array | undefined;
    if (entry.toLowerCase().startsWith(SHA256_PREFIX)) {
      digest = fromHex(entry.slice(SHA256_PREFIX.length));
      if (digest?.byteLength !== 32) {
        throw new Error(`${setting} entry ${index + 1}: sha256: must be followed by 64 hex digits`);
      }
    } else digest = await sha256(entry);
    keys.push({ digest, id: await idOf(digest) });
  }
  return keys;
}

/** The key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedKeys(request: Request): string[] {
  const found: string[] = [];
  const authorization = request.headers.get("authorization");
  const bearer = authorization === null ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (bearer?.[1] !== undefined) found.push(bearer[1].trim());
  const apiKey = request.headers.get("x-api-key");
  if (apiKey !== null && apiKey.trim() !== "") found.push(apiKey.trim());
  return found;
}

/**
 * The configured key matching one of `presented`, or undefined. Every configured digest is
 * compared (no early exit), so the time taken does not say which key, if any, matched.
 */
export async function matchKey(
  keys: readonly ConfiguredKey[],
  presented: readonly string[],
  compare: DigestCompare = timingSafeEqual,
): Promise<ConfiguredKey | undefined> {
  let match: ConfiguredKey | undefined;
  for (const candidate of presented) {
    const digest = await sha256(candidate);
    for (const key of keys) {
      if (compare(digest, key.digest) && match === undefined) match = key;
    }
  }
  return match;
}
