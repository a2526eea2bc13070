// The edge's SSE encoding on its own, one core: every protocol encoder found under
// edge/protocols/*/encoder.ts (an exported `create…StreamEncoder` whose request schema is the
// `…RequestSchema` of the same name in schema.ts) gets synthetic generation events; each token
// event's frames are formatted (edge/sse/frame.ts) and UTF-8 encoded, as the edge's stream does.
// Reports token chunks per second.
import { create } from "@bufbuild/protobuf";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  FinishReason,
  FinishSchema,
  StartSchema,
  TokenSchema,
  type Token,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { ResponseMeta, StreamEncoder } from "../../edge/core/endpoint.js";
import { formatEvent } from "../../edge/sse/frame.js";
import { failToParent, serveParent } from "../ipc.js";
import { ROOT } from "../peer-paths.js";
import { median } from "../stats.js";
import { argsOf, exitOnSigterm } from "./args.js";

export interface EncoderArgs {
  readonly reps: number;
  readonly ms: number;
  readonly tokens: number;
}

export interface EncoderResult {
  readonly protocol: string;
  readonly factory: string;
  /** Token chunks per second, one per repetition. */
  readonly chunksPerSecond: number[];
  readonly medianChunksPerSecond: number;
  /** Bytes of SSE text per token chunk (mean). */
  readonly bytesPerChunk: number;
}

export interface EncoderReport {
  readonly results: EncoderResult[];
  /** Encoder folders that could not be measured, and why. */
  readonly skipped: { readonly protocol: string; readonly reason: string }[];
}

type Factory = (body: unknown, meta: ResponseMeta) => StreamEncoder;
interface Schema {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}

/** Request bodies to try against a protocol's schema; the first it accepts is used. */
const CANDIDATE_BODIES: readonly unknown[] = [
  { model: "bench", prompt: "hi", stream: true, stream_options: { include_usage: true } },
  {
    model: "bench",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    stream_options: { include_usage: true },
  },
  { model: "bench", max_tokens: 128, messages: [{ role: "user", content: "hi" }], stream: true },
  { model: "bench", input: "hi", stream: true },
];

const isFunction = (v: unknown): v is (...args: never[]) => unknown => typeof v === "function";
const isSchema = (v: unknown): v is Schema =>
  typeof v === "object" && v !== null && "safeParse" in v && isFunction(v.safeParse);

async function discover(): Promise<{
  found: { protocol: string; factory: string; make: Factory; body: unknown }[];
  skipped: EncoderReport["skipped"];
}> {
  const dir = join(ROOT, "edge/protocols");
  const found: { protocol: string; factory: string; make: Factory; body: unknown }[] = [];
  const skipped: EncoderReport["skipped"] = [];
  for (const protocol of readdirSync(dir).sort()) {
    const encoderFile = join(dir, protocol, "encoder.ts");
    if (!existsSync(encoderFile)) continue;
    const encoder = (await import(pathToFileURL(encoderFile).href)) as Record<string, unknown>;
    const factoryName = Object.keys(encoder).find((k) => /^create\w*StreamEncoder$/.test(k));
    if (factoryName === undefined) continue; // not a streaming protocol (e.g. the model list)
    const stem = factoryName.slice("create".length, -"StreamEncoder".length);
    const schemaFile = join(dir, protocol, "schema.ts");
    const schemas = existsSync(schemaFile)
      ? ((await import(pathToFileURL(schemaFile).href)) as Record<string, unknown>)
      : {};
    const preferred = `${stem.charAt(0).toLowerCase()}${stem.slice(1)}RequestSchema`;
    const schemaNames = [
      preferred,
      ...Object.keys(schemas).filter((k) => k.endsWith("RequestSchema") && k !== preferred),
    ];
    let body: unknown;
    for (const name of schemaNames) {
      const schema = schemas[name];
      if (!isSchema(schema)) continue;
      body = CANDIDATE_BODIES.map((b) => schema.safeParse(b)).find((r) => r.success)?.data;
      if (body !== undefined) break;
    }
    const make = encoder[factoryName];
    if (body === undefined || !isFunction(make)) {
      skipped.push({ protocol, reason: `no sample request body fits ${protocol}/schema.ts` });
      continue;
    }
    found.push({ protocol, factory: factoryName, make: make as unknown as Factory, body });
  }
  return { found, skipped };
}

function syntheticTokens(count: number): Token[] {
  const words = [
    "The",
    " old",
    " lighthouse",
    " keeper",
    " climbed",
    " the",
    " narrow",
    " stairs",
    " every",
    " evening",
  ];
  const utf8 = new TextEncoder();
  return Array.from({ length: count }, (_, i) => {
    const text = words[i % words.length] ?? " word";
    return create(TokenSchema, { id: 1000 + (i % words.length), text, piece: utf8.encode(text) });
  });
}

/** Runs whole streams through one encoder for `ms`; returns token chunks/s and bytes per chunk. */
function measure(
  make: Factory,
  body: unknown,
  tokens: readonly Token[],
  ms: number,
): { perSecond: number; bytesPerChunk: number } {
  const utf8 = new TextEncoder();
  const start = create(StartSchema, { model: "bench", promptTokens: 26, cachedTokens: 0 });
  const finish = create(FinishSchema, {
    reason: FinishReason.LENGTH,
    promptTokens: 26,
    completionTokens: tokens.length,
    timings: { promptMs: 10, generationMs: 1000, queueMs: 0 },
  });
  let chunks = 0;
  let bytes = 0;
  let sink = 0;
  const began = performance.now();
  let stream = 0;
  while (performance.now() - began < ms) {
    const meta: ResponseMeta = {
      id: `bench-${stream++}`,
      created: 1_700_000_000,
      model: "bench",
      newId: () => `id${stream}`,
      now: () => 1_700_000_000_000,
    };
    const encoder = make(body, meta);
    sink += encoder.start(start).length;
    for (const token of tokens) {
      const frame = utf8.encode(encoder.token(token).map(formatEvent).join(""));
      bytes += frame.byteLength;
      chunks++;
    }
    sink += encoder.finish(finish).length;
  }
  const seconds = (performance.now() - began) / 1000;
  if (sink < 0) console.error(sink); // keeps the frames observable
  return { perSecond: chunks / seconds, bytesPerChunk: bytes / Math.max(1, chunks) };
}

async function runAll(args: EncoderArgs): Promise<EncoderReport> {
  const { found, skipped } = await discover();
  const tokens = syntheticTokens(args.tokens);
  const results: EncoderResult[] = [];
  for (const { protocol, factory, make, body } of found) {
    measure(make, body, tokens, Math.min(200, args.ms)); // warm-up (JIT)
    const reps = Array.from({ length: args.reps }, () => measure(make, body, tokens, args.ms));
    const rates = reps.map((r) => r.perSecond);
    results.push({
      protocol,
      factory,
      chunksPerSecond: rates,
      medianChunksPerSecond: median(rates),
      bytesPerChunk: reps[0]?.bytesPerChunk ?? 0,
    });
  }
  return { results, skipped };
}

try {
  const args = argsOf<EncoderArgs>();
  exitOnSigterm();
  serveParent({ run: () => runAll(args) }, {});
} catch (error) {
  failToParent(error);
}
