// A stream's next token sampled with its decode (presampling.ts, the engine's presample patch) is the token the usual
// sampling call gives: the 60M random-weight model (whose replies change with the smallest change in the logits),
// greedy and seeded at temperature 1, one stream and four side by side, token for token against the same model with
// presampling off; requests whose sampler changes from token to token (penalties, log probabilities) sample as before.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { LlamaContext } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { GenerateRequestSchema, type SamplingOptionsSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { presampleSteps, sameConfig } from "../../sidecar/engine/llama/presampling.js";

type Sampling = MessageInitShape<typeof SamplingOptionsSchema>;

let on: LoadedModel;
let off: LoadedModel;

function load(presample: boolean): Promise<LoadedModel> {
  const base = {
    modelPath: modelPath("random-60m"),
    threads: 1,
    engine: "auto" as const,
    sequences: 4,
    contextSize: 1024,
  };
  return loadModel({ ...base, maxQueue: 4, queueTimeoutMs: 10_000, specLookup: 0, presample } as const);
}

beforeAll(async () => {
  await ensureModels("models", ["random-60m"]);
  [on, off] = [await load(true), await load(false)];
}, 120_000);

afterAll(async () => {
  await on?.dispose();
  await off?.dispose();
});

/** The token ids of one reply to `prompt`. */
async function reply(
  loaded: LoadedModel,
  prompt: string,
  sampling: Sampling,
  more: { logprobs?: boolean } = {},
): Promise<number[]> {
  const request = create(GenerateRequestSchema, {
    input: { case: "prompt", value: prompt },
    maxTokens: 40,
    sampling,
    ...more,
  });
  const ids: number[] = [];
  for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics())) {
    if (event?.case === "token") ids.push(event.value.id ?? -1);
  }
  return ids;
}

const PROMPTS = ["The lighthouse keeper wrote", "Copper and maple, north of", "Signals from orbit", "A quiet engine"];

describe("presampling", () => {
  it("samples greedy and seeded replies with their decode, token for token the usual sampling's", async () => {
    for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 7 }, { temperature: 0.8, seed: 3, topK: 0 }]) {
      const before = { ...on.presampled };
      const [with_, without] = [
        await reply(on, PROMPTS[0] ?? "", sampling),
        await reply(off, PROMPTS[0] ?? "", sampling),
      ];
      expect(with_).toEqual(without);
      expect(with_).toHaveLength(40);
      // Every step once the sampler is known (the first token's) and its config seen (the second's): all but two.
      expect((on.presampled?.taken ?? 0) - (before.taken ?? 0)).toBe(38);
      expect(on.presampled?.setAside).toBe(0);
    }
    expect(off.presampled).toBeUndefined();
  }, 120_000);

  it("samples four streams' steps in one decode, each reply the one it is alone", async () => {
    const sampling = { temperature: 1, seed: 11 };
    const alone = [];
    for (const prompt of PROMPTS) alone.push(await reply(off, prompt, sampling));
    const before = on.presampled?.taken ?? 0;
    const together = await Promise.all(PROMPTS.map((prompt) => reply(on, prompt, sampling)));
    expect(together).toEqual(alone);
    expect((on.presampled?.taken ?? 0) - before).toBeGreaterThanOrEqual(4 * 38);
    expect(on.presampled?.setAside).toBe(0);
  }, 120_000);

  it("leaves penalties and log probabilities to the usual sampling call", async () => {
    const before = on.presampled?.taken ?? 0;
    const penalised = { temperature: 1, seed: 5, presencePenalty: 0.5 };
    expect(await reply(on, PROMPTS[1] ?? "", penalised)).toEqual(await reply(off, PROMPTS[1] ?? "", penalised));
    const greedy = { temperature: 0 };
    const logprobs = { logprobs: true };
    expect(await reply(on, PROMPTS[2] ?? "", greedy, logprobs)).toEqual(
      await reply(off, PROMPTS[2] ?? "", greedy, logprobs),
    );
    expect(on.presampled?.taken).toBe(before);
  }, 120_000);
});

describe("presampling without the patch", () => {
  it("is off where the library has no decodeBatchAndSample", () => {
    const context = { _ctx: { decodeBatch: () => Promise.resolve(), sampleToken: () => Promise.resolve(0) } };
    expect(presampleSteps(context as unknown as LlamaContext)).toBeUndefined();
  });
});

describe("sameConfig", () => {
  it("compares values and typed arrays element by element", () => {
    const breakers = ["\n"];
    const a = { temperature: 1, seed: 7, tokenBiasKeys: Uint32Array.of(3, 4), dry: breakers };
    expect(sameConfig(a, { ...a, tokenBiasKeys: Uint32Array.of(3, 4) })).toBe(true);
    expect(sameConfig(a, { ...a, tokenBiasKeys: Uint32Array.of(3, 5) })).toBe(false);
    expect(sameConfig(a, { ...a, seed: 8 })).toBe(false);
    expect(sameConfig(a, { ...a, dry: ["\n"] })).toBe(false);
    expect(sameConfig(a, { temperature: 1, seed: 7, tokenBiasKeys: Uint32Array.of(3, 4) })).toBe(false);
  });
});
