// How decode steps reach llama.cpp with several generations at once (sidecar/engine/batch-scheduling.ts):
// after the prompts, every step of N concurrent generations is one N-sequence batch.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../scripts/gguf/models.js";
import { FIRST_TOKEN_POSITION, generate } from "../../sidecar/engine/generate.js";
import { EngineMetrics } from "../../sidecar/engine/metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/model.js";
import { readAhead } from "../../sidecar/engine/read-ahead.js";
import { watchBatches } from "../support/engine.js";

const STREAMS = 4;
const TOKENS = 16;

describe("batch scheduling", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    loaded = await loadModel({ modelPath: modelPath("scripted"), threads: 1, engine: "auto", sequences: STREAMS, contextSize: 256, maxQueue: 1, queueTimeoutMs: 10_000 });
  });
  afterAll(() => loaded?.dispose());

  it(`sends every step of ${STREAMS} concurrent generations as one ${STREAMS}-sequence batch`, async () => {
    const sizes: number[] = [];
    watchBatches(loaded, (sequences) => sizes.push(sequences));
    const run = async (): Promise<number> => {
      const request = create(GenerateRequestSchema, { input: { case: "prompt", value: "Let us sing. Sing" }, maxTokens: TOKENS, sampling: { temperature: 0 } });
      let tokens = 0;
      const events = generate(loaded, request, new AbortController().signal, new EngineMetrics());
      for await (const { event } of readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION })) if (event?.case === "token") tokens++;
      return tokens;
    };
    expect(await Promise.all(Array.from({ length: STREAMS }, run))).toEqual(Array.from({ length: STREAMS }, () => TOKENS));
    // The prompts may go in more than one batch; each of the TOKENS - 1 steps after them goes in one.
    expect(sizes.filter((n) => n === STREAMS).length).toBeGreaterThanOrEqual(TOKENS - 1);
    expect(sizes.length).toBeLessThanOrEqual(TOKENS - 1 + STREAMS);
  });
});
