// Speculative decoding by prompt lookup (sidecar/engine/llama/prompt-lookup.ts) on the real engine:
// the drafter's drafts, replies token for token the ones without drafts (alone, four at once,
// seeded), several tokens a decode where the reply repeats, the sequence left holding what it says,
// and no drafts where sampling reads the reply so far.
import { create } from "@bufbuild/protobuf";
import type { Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import {
  Acceptance,
  DEFAULT_LOOKUP_DRAFT,
  PairLookup,
  type PromptLookup,
} from "../../sidecar/engine/llama/prompt-lookup.js";
import { ReplyPool } from "../../sidecar/engine/llama/reply-pool.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
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

const tokens = (...ids: number[]): Token[] => ids as Token[];

describe("the pair lookup drafter", () => {
  it(
    "drafts what followed the last tokens, as long as the match behind them (three at least), shorter after a draft " +
      "the reply left",
    () => {
      const lookup = new PairLookup(8);
      lookup.reset({ stateTokens: tokens(1, 2, 3, 4, 5, 6, 1, 2) });
      // (1, 2) at 0-1, nothing before it: a match of two drafts nothing.
      expect(lookup.predictTokens()).toEqual([]);
      lookup.pushTokens(tokens(3));
      // (2, 3) at 1-2, the 1 before it matching too: a match of three, a draft of three.
      expect(lookup.predictTokens()).toEqual([4, 5, 6]);
      // The reply took one drafted token, then went its own way; (4, 9) was never seen.
      lookup.pushTokens(tokens(4, 9));
      expect(lookup.predictTokens()).toEqual([]);
      // (3, 4) matches four back (1, 2, 3, 4), but the last draft left the reply after one token: a draft of one.
      lookup.pushTokens(tokens(1, 2, 3, 4));
      expect(lookup.predictTokens()).toEqual([9]);
      lookup.pushTokens(tokens(9));
      // Taken whole, the limit doubles (to 2; the match behind is longer).
      expect(lookup.predictTokens()).toEqual([1, 2]);
      // A pair never seen drafts nothing.
      lookup.pushTokens(tokens(7, 8));
      expect(lookup.predictTokens()).toEqual([]);
    },
  );

  it("drafts from the model's last replies where they match as far back as its own tokens, past the first step", () => {
    const pool = new ReplyPool();
    // A reply given before: 1 2 3 4 then an edit (50 51) where the prompt's copy goes on 5 6.
    pool.add(tokens(1, 2, 3, 4, 50, 51, 7, 8));
    const state = tokens(1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2);
    const lookup = new PairLookup(8, pool);
    lookup.reset({ stateTokens: state });
    // The reply's first step drafts nothing from the pool (nor here from the prompt: a match of two).
    expect(lookup.predictTokens()).toEqual([]);
    lookup.pushTokens(tokens(3));
    // (2, 3) matches three back in the prompt and in the pool: the reply given before wins.
    expect(lookup.predictTokens()).toEqual([4, 50, 51]);
    const alone = new PairLookup(8);
    alone.reset({ stateTokens: state });
    alone.predictTokens();
    alone.pushTokens(tokens(3));
    expect(alone.predictTokens()).toEqual([4, 5, 6]);
    // Two tokens in common with a pooled reply draft nothing.
    const short = new PairLookup(8, pool);
    short.reset({ stateTokens: tokens(9, 9, 3) });
    short.predictTokens();
    short.pushTokens(tokens(4));
    expect(short.predictTokens()).toEqual([]);
    // What the pool keeps of a reply: the reply and up to 8 prompt tokens before it.
    const replying = new PairLookup(8);
    replying.reset({ stateTokens: tokens(...Array.from({ length: 12 }, (_, i) => 100 + i)) });
    replying.predictTokens();
    replying.pushTokens(tokens(7, 7));
    expect(replying.reply()).toEqual([104, 105, 106, 107, 108, 109, 110, 111, 7, 7]);
  });

  it("drafts what its budget says is worth the cost, a token at least behind a repeated passage, and learns", () => {
    const rates: number[] = [];
    let worth = 0;
    const budget = {
      worth: (rate: number) => {
        rates.push(rate);
        return worth;
      },
      model: new Acceptance(3, 1),
    };
    const lookup = new PairLookup(8, undefined, budget);
    lookup.reset({ stateTokens: tokens(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3) });
    // A match of three, nothing worth drafting: no draft. The reply's rate starts from the model's (3 of 4).
    expect(lookup.predictTokens()).toEqual([]);
    expect(rates[0]).toBeCloseTo(0.75, 6);
    // Eight tokens matching behind the pair: a repeated passage drafts one token all the same.
    lookup.pushTokens(tokens(4, 5, 6, 7, 8));
    expect(lookup.predictTokens()).toEqual([9]);
    // Taken: the reply's rate and the model's rise; worth 3 now, a draft of 3.
    lookup.pushTokens(tokens(9, 10));
    worth = 3;
    expect(lookup.predictTokens()).toEqual([11, 12, 1]);
    expect(rates.at(-1)).toBeGreaterThan(0.75);
    expect(budget.model.rate).toBeGreaterThan(0.75);
    // Refused at its first token: both rates fall.
    const [reply, model] = [rates.at(-1) as number, budget.model.rate];
    lookup.pushTokens(tokens(50, 51));
    // No pair to draft from: the budget is not asked.
    const asked = rates.length;
    expect(lookup.predictTokens()).toEqual([]);
    expect(rates).toHaveLength(asked);
    lookup.pushTokens(tokens(1, 2, 3));
    lookup.predictTokens();
    expect(rates.at(-1)).toBeLessThan(reply);
    expect(budget.model.rate).toBeLessThan(model);
  });

  it("drafts a loop's next turns past the end of what it holds", () => {
    const lookup = new PairLookup(8);
    lookup.reset({ stateTokens: tokens(5, 7, 8, 7, 8, 7, 8) });
    // (7, 8) last seen at 3-4 with a token after it, the match going back to 1: a draft of four,
    // two of them past the end (the loop copied forward).
    expect(lookup.predictTokens()).toEqual([7, 8, 7, 8]);
  });
});

describe("prompt lookup on the scripted model", () => {
  let on: LoadedModel;
  let off: LoadedModel;
  beforeAll(async () => {
    // Drafts as long as the match allows (`draftCost: "none"`): the counts below hang on no timing. Steps are timed all
    // the same.
    [on, off] = await Promise.all([
      loadScripted({ sequences: 2, contextSize: 1024, cacheRam: 0, draftCost: "none" }),
      loadScripted({ sequences: 2, contextSize: 1024, cacheRam: 0, specLookup: 0 }),
    ]);
  });
  afterAll(async () => {
    await on?.dispose();
    await off?.dispose();
  });

  it("is on by default and off at --spec-lookup 0", () => {
    expect(on.drafter?.draftMax).toBe(DEFAULT_LOOKUP_DRAFT);
    expect(off.drafter).toBeUndefined();
  });

  it(
    "gives the reply the prompt already holds, takes the drafts, and leaves the sequence holding prompt and " + "reply",
    async () => {
      const prompt = `Once upon a time${STORY} Once upon a time`;
      const before = { drafted: on.drafter?.drafted ?? 0, accepted: on.drafter?.accepted ?? 0 };
      const drafted = await generateText(on, prompt, 40);
      const plain = await generateText(off, prompt, 40);
      expect(drafted.text).toBe(STORY);
      expect([drafted.text, drafted.tokens]).toEqual([plain.text, plain.tokens]);
      expect((on.drafter?.accepted ?? 0) - before.accepted).toBeGreaterThanOrEqual(8);
      expect((on.drafter?.drafted ?? 0) - before.drafted).toBeGreaterThanOrEqual(
        (on.drafter?.accepted ?? 0) - before.accepted,
      );
      for (const sequence of on.pool.all()) expect(sequence.nextTokenIndex).toBe(sequence.contextTokens.length);
      // The same prompt again: served from the cache, the same reply.
      const again = await generateText(on, prompt, 40);
      expect(again.cachedTokens).toBeGreaterThan(0);
      expect(again.text).toBe(STORY);
    },
  );

  it("checks several tokens a decode where the reply repeats itself", async () => {
    const sizes: number[] = [];
    watchBatches(on, (perSequence) => sizes.push(...perSequence));
    const sung = await generateText(on, "Let us sing. Sing", 60);
    expect(sung.text).toBe(" la".repeat(60));
    const steps = sizes.filter((size) => size > 0).length;
    // The prompt's batch, then far fewer decodes than tokens.
    expect(steps).toBeLessThanOrEqual(20);
    expect(Math.max(...sizes.slice(1))).toBeGreaterThan(4);
    // Its steps, timed: steps of several sizes give what one more token costs.
    const times = (on.drafter as PromptLookup).steps.times;
    expect(times?.fixedMs).toBeGreaterThan(0);
    expect(Number.isFinite(times?.perTokenMs)).toBe(true);
  });

  it("drafts nothing for a reply whose sampling reads the reply so far (penalties)", async () => {
    const drafted = on.drafter?.drafted ?? 0;
    const request = create(GenerateRequestSchema, {
      input: { case: "prompt", value: "Let us sing. Sing" },
      maxTokens: 20,
      sampling: { temperature: 0, repeatPenalty: 1.1 },
    });
    for await (const _ of generate(on, request, new AbortController().signal, new EngineMetrics()));
    expect(on.drafter?.drafted).toBe(drafted);
  });
});

describe("prompt lookup on random weights", () => {
  let on: LoadedModel;
  let off: LoadedModel;
  /** Drafts weighed as if one more token cost ten times a step's fixed part. */
  let dear: LoadedModel;
  /** Drafts weighed as if one more token cost nothing: as long as the match allows, in steps a stream has alone. */
  let lone: LoadedModel;
  const prompts = RANDOM_PROMPTS;
  beforeAll(async () => {
    // `on` drafts as long as the match and the last draft allow, beside other streams too: counts hang on no timing.
    [on, off, dear, lone] = await Promise.all([
      loadRandomTiny({ specLookup: 8, draftCost: "none" }),
      loadRandomTiny({ specLookup: 0 }),
      loadRandomTiny({ specLookup: 8, draftCost: { fixedMs: 1, perTokenMs: 10 } }),
      loadRandomTiny({ specLookup: 8, draftCost: { fixedMs: 1, perTokenMs: 0 } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([on, off, dear, lone].map((loaded) => loaded?.dispose()));
  });

  it("drafts only in steps a stream has alone: beside others a draft is a pass over the weights a token", async () => {
    const seen: number[][] = [];
    watchBatches(lone, (perSequence) => seen.push(perSequence));
    const replies = await Promise.all(prompts.map((p) => reply(lone, p, 120, { temperature: 0 })));
    expect(replies).toEqual(await Promise.all(prompts.map((p) => reply(off, p, 120, { temperature: 0 }))));
    // After the prompts' batch, every batch of several sequences is one token each.
    const shared = seen.slice(1).filter((sizes) => sizes.length > 1);
    expect(shared.length).toBeGreaterThan(100);
    expect(shared.filter((sizes) => sizes.some((size) => size > 1))).toEqual([]);
    // Alone, the same model drafts.
    const drafted = lone.drafter?.drafted ?? 0;
    await reply(lone, prompts[0] as string, 120, { temperature: 0 });
    expect(lone.drafter?.drafted ?? 0).toBeGreaterThan(drafted);
  });

  it("drafts a seeded reply by its own tokens alone, so it repeats beside other streams too", async () => {
    // `lone` drafts a greedy reply only in steps it has alone; a seeded one's sampler draws once a drafted position.
    // At a low temperature random weights loop, so the seeded reply drafts.
    const seeded = { temperature: 0.1, seed: 7 };
    const drafted = lone.drafter?.drafted ?? 0;
    const alone = await reply(lone, "hello world", 120, seeded);
    expect(lone.drafter?.drafted ?? 0).toBeGreaterThan(drafted);
    const beside = await Promise.all(["hello world", ...prompts.slice(1)].map((p) => reply(lone, p, 120, seeded)));
    expect(alone.length).toBeGreaterThan(20);
    expect(beside[0]).toEqual(alone);
  });

  it("drafts far less where a token costs most of a step, the replies unchanged", async () => {
    const counts = async (loaded: LoadedModel) => {
      const before = { drafted: loaded.drafter?.drafted ?? 0, refuted: refuted(loaded) };
      const replies = await Promise.all(prompts.map((p) => reply(loaded, p, 120, { temperature: 0 })));
      return {
        replies,
        drafted: (loaded.drafter?.drafted ?? 0) - before.drafted,
        refuted: refuted(loaded) - before.refuted,
      };
    };
    const [cheap, costly] = [await counts(on), await counts(dear)];
    expect(costly.replies).toEqual(cheap.replies);
    expect(costly.replies).toEqual(await Promise.all(prompts.map((p) => reply(off, p, 120, { temperature: 0 }))));
    expect(costly.refuted).toBeLessThan(cheap.refuted / 2);
  });

  it("gives at temperature 0 the replies it gives without drafts, alone and four at once", async () => {
    await expectGreedyReplies(on, off, 120);
    // Random weights fall into loops, which the reply's own pairs draft.
    expect(on.drafter?.accepted).toBeGreaterThan(0);
  });

  it("keeps four streams in one step when drafts are refuted: none stands still while the others decode", async () => {
    // A refuted draft's cells are erased under the context's lock; without a turn between steps the sequence waited
    // until the other replies had ended (batch-scheduling.ts, point 5).
    const seen: number[][] = [];
    watchBatches(on, (_, __, ids) => seen.push([...new Set(ids)]));
    const refutedBefore = refuted(on);
    await Promise.all(prompts.map((p) => reply(on, p, 150, { temperature: 0 })));
    expect(refuted(on)).toBeGreaterThan(refutedBefore);
    // For each sequence, the longest run of batches it missed between its first and its last.
    const gaps = [...new Set(seen.flat())].map((id) => {
      const at = seen.flatMap((ids, i) => (ids.includes(id) ? [i] : []));
      return Math.max(0, ...at.slice(1).map((i, k) => i - (at[k] as number) - 1));
    });
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1);
  });

  it("drafts a greedy reply asked again from the reply it had; a seeded one from its own tokens alone", async () => {
    const prompt = "hello world"; // a 120-token reply (random-tiny at temperature 0)
    const accepted = () => on.drafter?.accepted ?? 0;
    const drafted = () => on.drafter?.drafted ?? 0;
    let before = accepted();
    const first = await reply(on, prompt, 120, { temperature: 0 });
    const firstAccepted = accepted() - before;
    before = accepted();
    const again = await reply(on, prompt, 120, { temperature: 0 });
    expect(again).toEqual(first);
    expect(again).toEqual(await reply(off, prompt, 120, { temperature: 0 }));
    expect(accepted() - before).toBeGreaterThan(firstAccepted);
    // Drafts of up to 8 tokens a step (the lookup's setting here): at most 8 of every 9 tokens drafted.
    expect(accepted() - before).toBeGreaterThanOrEqual(90);
    // A seeded reply drafts the same the second time: what the pool gained meanwhile is not read.
    const seeded = { temperature: 1, seed: 11 };
    const counts: number[] = [];
    for (let i = 0; i < 2; i++) {
      const start = drafted();
      await reply(on, prompt, 120, seeded);
      counts.push(drafted() - start);
    }
    expect(counts[1]).toBe(counts[0]);
  });

  it("repeats a seeded reply alone and beside other streams", async () => {
    const seeded = { temperature: 1, seed: 7 };
    const first = await reply(on, prompts[0] as string, 100, seeded);
    const again = await reply(on, prompts[0] as string, 100, seeded);
    const beside = await Promise.all([
      reply(on, prompts[0] as string, 100, seeded),
      ...prompts.slice(1).map((p) => reply(on, p, 100, seeded)),
    ]);
    expect(first).toHaveLength(100);
    expect(again).toEqual(first);
    expect(beside[0]).toEqual(first);
  });
});

/** Drafted tokens a model's replies checked and did not take. */
function refuted(loaded: LoadedModel): number {
  return (loaded.drafter?.drafted ?? 0) - (loaded.drafter?.accepted ?? 0);
}
