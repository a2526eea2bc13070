// Threads per batch (sidecar/engine/llama/batch-threads.ts): a batch of a few tokens runs on the decode
// threads, a prompt or a step of many streams on the batch threads; "a few" shrinks as models grow.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import {
  BATCH_THREADS_MAX_MIN_TOKENS as BATCH_THREADS_MIN_TOKENS,
  batchThreadsMinTokens,
} from "../../sidecar/engine/llama/batch-threads.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { watchBatches } from "../support/engine.js";

const STREAMS = BATCH_THREADS_MIN_TOKENS;

describe("batchThreadsMinTokens", () => {
  it(
    "is 8 tokens for a model as small as the 60M test model, 2 (as llama.cpp) from ~450 MB up, and in between by " +
      "the model's size",
    () => {
      expect(batchThreadsMinTokens(121_504)).toBe(8);
      expect(batchThreadsMinTokens(120_749_664)).toBe(8);
      expect(batchThreadsMinTokens(181_124_496)).toBe(5);
      expect(batchThreadsMinTokens(452_811_240)).toBe(2);
      expect(batchThreadsMinTokens(1_705_912_096)).toBe(2);
      expect(batchThreadsMinTokens(0)).toBe(8);
    },
  );
});

describe("threads per batch", () => {
  let loaded: LoadedModel;
  const batches: { tokens: number; threads: number }[] = [];
  beforeAll(async () => {
    loaded = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      threadsBatch: 2,
      engine: "auto",
      sequences: STREAMS,
      contextSize: 256,
      maxQueue: 1,
      queueTimeoutMs: 10_000,
      // Without drafts: every step is one token.
      specLookup: 0,
    });
    watchBatches(loaded, (items, threads) => batches.push({ tokens: items.reduce((a, b) => a + b, 0), threads }));
  });
  afterAll(() => loaded?.dispose());

  const run = async (prompt: string, maxTokens: number): Promise<number> => {
    const request = create(GenerateRequestSchema, {
      input: { case: "prompt", value: prompt },
      maxTokens,
      sampling: { temperature: 0 },
    });
    let tokens = 0;
    for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics()))
      if (event?.case === "token") tokens++;
    return tokens;
  };

  it("runs one stream's steps on the decode threads and its prompt on the batch threads", async () => {
    batches.length = 0;
    expect(loaded.threads).toBe(1);
    expect(loaded.threadsBatch).toBe(2);
    expect(loaded.batchThreadsFrom).toBe(BATCH_THREADS_MIN_TOKENS);
    // --flash-attention auto on a CPU-only host: on with the local build, off with the prebuilt library
    // (docs/decisions.md, "Flash attention on the CPU, one arithmetic a row").
    expect(loaded.context.flashAttention).toBe(loaded.llama.buildType === "localBuild");
    expect(await run("Once upon a time there lived a tiny llama. Let us sing. Sing", 12)).toBe(12);
    const [prompt, ...steps] = batches;
    expect(prompt?.tokens).toBeGreaterThanOrEqual(BATCH_THREADS_MIN_TOKENS);
    expect(prompt?.threads).toBe(2);
    expect(steps.length).toBeGreaterThanOrEqual(11);
    expect(steps.every((b) => b.tokens === 1 && b.threads === 1)).toBe(true);
  });

  it(
    `runs every batch of ${BATCH_THREADS_MIN_TOKENS} tokens or more on the batch threads, and smaller ones on the ` +
      `decode threads`,
    async () => {
      batches.length = 0;
      // Half the streams end after 8 tokens: the other half's last steps are 4-token batches.
      const lengths = Array.from({ length: STREAMS }, (_, i) => (i % 2 === 0 ? 8 : 16));
      const all = await Promise.all(lengths.map((length, i) => run(`Song ${i}. Let us sing. Sing`, length)));
      expect(all).toEqual(lengths);
      expect(batches.filter((b) => b.tokens === STREAMS).length).toBeGreaterThanOrEqual(6);
      expect(batches.filter((b) => b.tokens === STREAMS / 2).length).toBeGreaterThanOrEqual(6);
      for (const b of batches) expect(b.threads).toBe(b.tokens >= BATCH_THREADS_MIN_TOKENS ? 2 : 1);
    },
  );
});
