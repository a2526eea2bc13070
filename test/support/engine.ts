// The scripted test model loaded in-process, a generation run on it, and a watch of its context
// from the inside: every batch llama.cpp decodes.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { type ModelName, modelPath } from "../../gguf/models.js";
import { GenerateRequestSchema, type SamplingOptionsSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { FIRST_TOKEN_POSITION, generate } from "../../sidecar/engine/decode/generate.js";
import { loadModel, type LoadedModel, type ModelOptions } from "../../sidecar/engine/llama/model.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { readAhead } from "../../sidecar/engine/streams/read-ahead.js";

/** The scripted test model on one thread, with `options` over a queue of one and a 10 s queue timeout. */
export function loadScripted(
  options: Pick<ModelOptions, "sequences" | "contextSize"> & Partial<ModelOptions>,
): Promise<LoadedModel> {
  return loadModel({
    modelPath: modelPath("scripted"),
    threads: 1,
    engine: "auto",
    maxQueue: 1,
    queueTimeoutMs: 10_000,
    ...options,
  });
}

/** A random-weight model on two threads (a ggml worker beside the decoding one), two sequences of `contextSize`. */
export function loadRandom(name: ModelName = "random-60m", contextSize = 512): Promise<LoadedModel> {
  return loadModel({
    modelPath: modelPath(name),
    threads: 2,
    engine: "auto",
    sequences: 2,
    contextSize,
    maxQueue: 2,
    queueTimeoutMs: 10_000,
    specLookup: 0,
  });
}

/** What one generation gave: its text, its token count, and the prompt tokens its sequence already held. */
export interface Generated {
  readonly text: string;
  readonly tokens: number;
  readonly cachedTokens: number;
}

/**
 * Generates from `prompt` at temperature 0 through the engine's `generate`; `onToken` sees the running count of tokens.
 */
export async function generateText(
  loaded: LoadedModel,
  prompt: string,
  maxTokens: number,
  options: {
    readonly metrics?: EngineMetrics;
    readonly onToken?: (count: number) => unknown;
    /** GenerateRequest.arriving_with: requests its caller says are right behind it. */
    readonly arrivingWith?: number;
  } = {},
): Promise<Generated> {
  const request = create(GenerateRequestSchema, {
    input: { case: "prompt", value: prompt },
    maxTokens,
    sampling: { temperature: 0 },
    arrivingWith: options.arrivingWith ?? 0,
  });
  const events = generate(loaded, request, new AbortController().signal, options.metrics ?? new EngineMetrics());
  let text = "";
  let tokens = 0;
  let cachedTokens = -1;
  for await (const { event } of readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION })) {
    if (event?.case === "start") cachedTokens = event.value.cachedTokens ?? 0;
    if (event?.case !== "token") continue;
    text += event.value.text;
    tokens++;
    options.onToken?.(tokens);
  }
  return { text, tokens, cachedTokens };
}

/**
 * Calls `onBatch` with the tokens of each sequence in a batch, the threads it runs on and the
 * sequences' ids, as its decode starts. Wraps the context's native handle (node-llama-cpp's
 * `_ctx`): `addToBatch` once per sequence, then `decodeBatch`.
 */
export function watchBatches(
  loaded: LoadedModel,
  onBatch: (tokensPerSequence: number[], threads: number, sequenceIds: number[]) => void,
): void {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  let added: number[] = [];
  let ids: number[] = [];
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "addToBatch") {
        return (...args: unknown[]): unknown => {
          ids.push(args[0] as number);
          added.push((args[2] as ArrayLike<number>).length);
          return value.apply(target, args);
        };
      }
      if (key === "decodeBatch") {
        return (...args: unknown[]): unknown => {
          onBatch(added, (target.getThreads as () => number).call(target), ids);
          added = [];
          ids = [];
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

/** Calls `onSampled()` as each of node-llama-cpp's samplings (`_ctx.sampleToken`, on a worker thread) resolves. */
export function watchSampled(loaded: LoadedModel, onSampled: () => void): void {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key !== "sampleToken") return value.bind(target);
      return async (...args: unknown[]): Promise<unknown> => {
        const sampled: unknown = await value.apply(target, args);
        onSampled();
        return sampled;
      };
    },
  });
}

/**
 * Counts, for each batch, the samplings that started while the batch's first was still running
 * (node-llama-cpp's `_ctx.sampleToken`, which runs on a worker thread). Returns the counts so far.
 */
export function watchSampling(loaded: LoadedModel): { batches: number; overlapping: number } {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  const seen = { batches: 0, overlapping: 0 };
  let first: "none" | "running" | "done" = "none";
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "decodeBatch") {
        return (...args: unknown[]): unknown => {
          seen.batches++;
          first = "none";
          return value.apply(target, args);
        };
      }
      if (key === "sampleToken") {
        return async (...args: unknown[]): Promise<unknown> => {
          if (first === "running") seen.overlapping++;
          const isFirst = first === "none";
          if (isFirst) first = "running";
          try {
            return await value.apply(target, args);
          } finally {
            if (isFirst) first = "done";
          }
        };
      }
      return value.bind(target);
    },
  });
  return seen;
}

/** A reply's token ids, through the engine's generate. */
export async function reply(
  loaded: LoadedModel,
  prompt: string,
  maxTokens: number,
  sampling: MessageInitShape<typeof SamplingOptionsSchema>,
): Promise<number[]> {
  const request = create(GenerateRequestSchema, { input: { case: "prompt", value: prompt }, maxTokens, sampling });
  const ids: number[] = [];
  for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics())) {
    if (event?.case === "token") ids.push(event.value.id ?? -1);
  }
  return ids;
}

/** The random-tiny model on one thread: four sequences of 2,048 tokens, no KV tier, `options` over. */
export function loadRandomTiny(options: Partial<ModelOptions>): Promise<LoadedModel> {
  return loadModel({
    modelPath: modelPath("random-tiny"),
    threads: 1,
    engine: "auto",
    maxQueue: 8,
    queueTimeoutMs: 30_000,
    sequences: 4,
    contextSize: 2048,
    cacheRam: 0,
    ...options,
  });
}

/** Prompts whose replies on random weights differ from the first token and fall into loops. */
export const RANDOM_PROMPTS = ["the cat sat on the mat", "a b c d e f", "one two three", "lorem ipsum dolor sit amet"];

/** `on`'s replies at temperature 0 to RANDOM_PROMPTS, one at a time and four at once, are `off`'s, token for token. */
export async function expectGreedyReplies(on: LoadedModel, off: LoadedModel, tokens: number): Promise<void> {
  const greedy = { temperature: 0 };
  const plain: number[][] = [];
  for (const prompt of RANDOM_PROMPTS) plain.push(await reply(off, prompt, tokens, greedy));
  const alone: number[][] = [];
  for (const prompt of RANDOM_PROMPTS) alone.push(await reply(on, prompt, tokens, greedy));
  const together = await Promise.all(RANDOM_PROMPTS.map((prompt) => reply(on, prompt, tokens, greedy)));
  expect(alone).toEqual(plain);
  expect(together).toEqual(plain);
}
