// Speculative decoding with a draft model (sidecar/engine/llama/draft-model.ts) on the real engine:
// a model drafted by a model of its vocabulary (itself) gives token for token the reply without
// drafts, takes the drafts and checks several tokens a decode; a seeded reply repeats; a
// draft model of another vocabulary is refused at load, naming both; `--model-draft` reaches the
// `--model` entries of the catalogue, a preset's `draft` its own, and the memory estimate counts it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { buildCatalogue } from "../../sidecar/catalogue/model-catalogue.js";
import { estimate, readModelFile } from "../../sidecar/catalogue/estimate.js";
import { DRAFT_MODEL_MAX } from "../../sidecar/engine/llama/draft-model.js";
import { loadLlama, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import {
  expectGreedyReplies,
  generateText,
  loadRandomTiny,
  loadScripted,
  RANDOM_PROMPTS,
  reply,
  watchBatches,
} from "../support/engine.js";
import { STORY } from "../support/scripted.js";

describe("a draft model on the scripted model", () => {
  let drafted: LoadedModel;
  let plain: LoadedModel;
  beforeAll(async () => {
    [drafted, plain] = await Promise.all([
      loadScripted({ sequences: 2, contextSize: 1024, cacheRam: 0, draftModelPath: modelPath("scripted") }),
      loadScripted({ sequences: 2, contextSize: 1024, cacheRam: 0, specLookup: 0 }),
    ]);
  });
  afterAll(async () => {
    await drafted?.dispose();
    await plain?.dispose();
  });

  it("drafts with the draft model in place of prompt lookup", () => {
    expect(drafted.drafter?.kind).toBe("draft");
    expect(drafted.drafter?.draftMax).toBe(DRAFT_MODEL_MAX);
  });

  it("gives the reply without drafts, takes the drafts, several tokens a decode", async () => {
    const sizes: number[] = [];
    watchBatches(drafted, (perSequence) => sizes.push(...perSequence));
    const before = { drafted: drafted.drafter?.drafted ?? 0, accepted: drafted.drafter?.accepted ?? 0 };
    const prompt = `Once upon a time${STORY} Once upon a time`;
    const withDrafts = await generateText(drafted, prompt, 40);
    const without = await generateText(plain, prompt, 40);
    expect(withDrafts.text).toBe(STORY);
    expect([withDrafts.text, withDrafts.tokens]).toEqual([without.text, without.tokens]);
    const accepted = (drafted.drafter?.accepted ?? 0) - before.accepted;
    expect(accepted).toBeGreaterThanOrEqual(8);
    expect((drafted.drafter?.drafted ?? 0) - before.drafted).toBeGreaterThanOrEqual(accepted);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    for (const sequence of drafted.pool.all()) expect(sequence.nextTokenIndex).toBe(sequence.contextTokens.length);
  });
});

describe("a draft model on random weights", () => {
  let on: LoadedModel;
  let off: LoadedModel;
  const prompts = RANDOM_PROMPTS;
  beforeAll(async () => {
    // Random weights are sure of nothing: guesses of any probability.
    const draft = { draftModelPath: modelPath("random-tiny"), draftMinP: 0 };
    [on, off] = await Promise.all([loadRandomTiny({ specLookup: 0, ...draft }), loadRandomTiny({ specLookup: 0 })]);
  });
  afterAll(async () => {
    await on?.dispose();
    await off?.dispose();
  });

  it("gives at temperature 0 the replies it gives without drafts, alone and four at once", async () => {
    await expectGreedyReplies(on, off, 60);
    expect(on.drafter?.accepted).toBeGreaterThan(0);
  });

  it("repeats a seeded reply alone and beside other streams", async () => {
    const seeded = { temperature: 1, seed: 7 };
    const first = await reply(on, prompts[0] as string, 60, seeded);
    const again = await reply(on, prompts[0] as string, 60, seeded);
    const beside = await Promise.all(prompts.map((prompt) => reply(on, prompt, 60, seeded)));
    expect(again).toEqual(first);
    expect(beside[0]).toEqual(first);
  });
});

describe("a draft model that cannot draft", () => {
  it("is refused at load when its vocabulary differs, naming it", async () => {
    const qwen = modelPath("qwen3");
    await expect(loadScripted({ sequences: 1, contextSize: 256, cacheRam: 0, draftModelPath: qwen })).rejects.toThrow(
      `the draft model ${qwen} cannot draft for`,
    );
  });
});

describe("--model-draft and presets", () => {
  it("goes to the --model entries; a preset's draft wins for its model, and folder entries get none", () => {
    const catalogue = buildCatalogue(
      {
        models: ["/m/big.gguf", "/m/other.gguf"],
        folder: "/m",
        serveFolder: true,
        modelDraft: "/m/small.gguf",
        presets: { other: { draft: "/m/tiny.gguf" }, named: { model: "/m/named.gguf" } },
      },
      () => ["big", "other", "spare"],
    );
    const draftOf = (name: string) => catalogue.entries.find((e) => e.name === name)?.preset.draft;
    expect(draftOf("big")).toBe("/m/small.gguf");
    expect(draftOf("other")).toBe("/m/tiny.gguf");
    expect(draftOf("named")).toBeUndefined();
    expect(draftOf("spare")).toBeUndefined();
  });

  it("counts the draft model's weights and context in the model's memory", async () => {
    const llama = await loadLlama();
    const file = await readModelFile(llama, modelPath("scripted"));
    const draft = await readModelFile(llama, modelPath("demo"));
    const settings = { contextSize: 1024, sequences: 2, gpuLayers: 0, flashAttention: false } as const;
    const room = { ram: 2 ** 40, vram: 0 };
    const alone = await estimate(file, llama, settings, room);
    const withDraft = await estimate(file, llama, { ...settings, draft }, room);
    const draftAlone = await estimate(draft, llama, settings, room);
    expect(withDraft.need.ram).toBe(alone.need.ram + draftAlone.need.ram);
    expect(withDraft.weights.ram).toBe(alone.weights.ram + draftAlone.weights.ram);
  });
});
