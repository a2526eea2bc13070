// How decode steps reach llama.cpp with several generations at once (sidecar/engine/llama/batch-scheduling.ts,
// batch-shares.ts): after the prompts, every step of N concurrent generations is one N-sequence
// batch, and a long prompt joining streams is evaluated in small batches that carry their steps.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import { STREAMING_BATCH_TOKENS } from "../../sidecar/engine/llama/batch-shares.js";
import { generateText, loadScripted, watchBatches, watchSampled, watchSampling } from "../support/engine.js";

const STREAMS = 4;
const TOKENS = 16;

/**
 * The scripted model with STREAMS sequences, a batch's prompts beyond its first within `promptBatchTokens`;
 * without drafts, so every step is one token (drafted steps: speculation.test.ts).
 */
const scripted = (promptBatchTokens: number): Promise<LoadedModel> =>
  loadScripted({ sequences: STREAMS, contextSize: 256, promptBatchTokens, specLookup: 0 });

describe("batch scheduling", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    // Every prompt in one batch, as on a GPU and for a small model on a CPU; a bound is the last test's.
    loaded = await scripted(Number.POSITIVE_INFINITY);
  });
  afterAll(() => loaded?.dispose());

  /** Generates from `prompt` (on `model`, default the one loaded above); `onToken` sees the running count of tokens. */
  const run = async (
    prompt: string,
    maxTokens: number,
    onToken?: (count: number) => unknown,
    model?: LoadedModel,
  ): Promise<number> =>
    (await generateText(model ?? loaded, prompt, maxTokens, onToken === undefined ? {} : { onToken })).tokens;

  it(`sends every step of ${STREAMS} concurrent generations as one ${STREAMS}-sequence batch`, async () => {
    const sizes: number[] = [];
    watchBatches(loaded, (items) => sizes.push(items.length));
    const all = await Promise.all(Array.from({ length: STREAMS }, () => run("Let us sing. Sing", TOKENS)));
    expect(all).toEqual(Array.from({ length: STREAMS }, () => TOKENS));
    // The prompts may go in more than one batch; each of the TOKENS - 1 steps after them goes in one.
    expect(sizes.filter((n) => n === STREAMS).length).toBeGreaterThanOrEqual(TOKENS - 1);
    expect(sizes.length).toBeLessThanOrEqual(TOKENS - 1 + STREAMS);
  });

  const oneTurn = `starts the next step one event-loop turn after a step's ${STREAMS} samplings, not one a sequence`;
  it(oneTurn, async () => {
    // Turns counted by an immediate that queues itself: it runs once per event-loop turn.
    let [turns, ticking, lastSampled] = [0, true, 0];
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    watchSampled(loaded, () => {
      lastSampled = turns;
    });
    const [sizes, after]: [number[], number[]] = [[], []];
    watchBatches(loaded, (items) => {
      sizes.push(items.length);
      if (items.length === STREAMS && items.every((tokens) => tokens === 1)) after.push(turns - lastSampled);
    });
    try {
      await Promise.all(Array.from({ length: STREAMS }, () => run("Let us sing. Sing", TOKENS)));
    } finally {
      ticking = false;
    }
    expect(after.length).toBeGreaterThanOrEqual(TOKENS - 2);
    // One turn lets every sequence queue its step (the batch stays whole); node-llama-cpp awaits the sequences'
    // after-actions one by one, and a turn of each made STREAMS turns.
    expect(after.slice(1).filter((n) => n !== 1).length).toBeLessThanOrEqual(1);
    expect(sizes.filter((n) => n === STREAMS).length).toBeGreaterThanOrEqual(TOKENS - 1);
  });

  it("evaluates a long prompt beside two decoding streams in small batches that carry their next tokens", async () => {
    const batches: number[][] = [];
    watchBatches(loaded, (items) => batches.push(items));
    let started = (): void => undefined;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    const streams = [0, 1].map(() => run("Let us sing. Sing", 60, (count) => count === 3 && started()));
    await streaming;
    const from = batches.length;
    // A prompt of about 200 tokens: more than one streaming batch.
    const long = "Once upon a time there lived a tiny llama. ".repeat(20);
    expect(await run(long, 1)).toBe(1);
    const during = batches.slice(from).filter((items) => items.some((tokens) => tokens > 1));
    await Promise.all(streams);
    expect(during.length).toBeGreaterThanOrEqual(2);
    for (const items of during) {
      expect(items.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(STREAMING_BATCH_TOKENS);
      expect(items.filter((tokens) => tokens === 1)).toHaveLength(2);
    }
  });

  it(
    "evaluates prompts that arrive together in one batch, also when each must first trim another prompt's " + "cache",
    async () => {
      // Every sequence holds a prompt the next ones do not share, so each request trims first.
      await Promise.all(Array.from({ length: STREAMS }, (_, i) => run(`Verse ${i}. Let us sing. Sing`, 2)));
      const batches: number[][] = [];
      watchBatches(loaded, (items) => batches.push(items));
      const all = await Promise.all(
        Array.from({ length: STREAMS }, (_, i) => run(`Chorus ${i}. We hum along. Hum`, 4)),
      );
      expect(all).toEqual(Array.from({ length: STREAMS }, () => 4));
      // The prompts' batches come before the first batch of single-token steps only.
      const prompts = batches.slice(
        0,
        batches.findIndex((items) => items.every((tokens) => tokens === 1)),
      );
      expect(prompts.flat().filter((tokens) => tokens > 1)).toHaveLength(STREAMS);
      expect(prompts).toHaveLength(1);
    },
  );

  it(
    "samples the first output of every batch alone, so llama.cpp's lazy output reordering never runs twice at " +
      "once",
    async () => {
      const seen = watchSampling(loaded);
      const all = await Promise.all(Array.from({ length: STREAMS }, () => run("Let us sing. Sing", TOKENS)));
      expect(all).toEqual(Array.from({ length: STREAMS }, () => TOKENS));
      expect(seen.batches).toBeGreaterThanOrEqual(TOKENS);
      expect(seen.overlapping).toBe(0);
    },
  );

  it(
    "within a bound (a large model on a CPU), prompts arriving together go a few at a time, the first ones stepping " +
      "beside the next",
    async () => {
      const BOUND = 64;
      const cpu = await scripted(BOUND);
      try {
        const batches: number[][] = [];
        watchBatches(cpu, (items) => batches.push(items));
        const all = await Promise.all(
          Array.from({ length: STREAMS }, (_, i) =>
            run(`Chorus ${i}. We hum along and on and on. Hum`, 4, undefined, cpu),
          ),
        );
        expect(all).toEqual(Array.from({ length: STREAMS }, () => 4));
        const withPrompts = batches.filter((items) => items.some((tokens) => tokens > 1));
        const promptSizes = withPrompts.map((items) => items.filter((tokens) => tokens > 1));
        // Each prompt whole in one batch; more than one only within the bound.
        expect(promptSizes.flat()).toHaveLength(STREAMS);
        for (const sizes of promptSizes)
          if (sizes.length > 1) expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(BOUND);
        expect(withPrompts.length).toBeGreaterThan(1);
        // The later prompts' batches carry the earlier prompts' next tokens.
        expect(withPrompts.slice(1).every((items) => items.includes(1))).toBe(true);
      } finally {
        await cpu.dispose();
      }
    },
  );
});
