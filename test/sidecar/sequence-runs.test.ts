// The pool keeps busy sequences' ids side by side on the real engine (sidecar/engine/llama/sequence-pool.ts,
// RUN_COST_TOKENS): llama.cpp evaluates a batch one run of consecutive sequence ids at a time, so
// two streams on ids apart cost two passes over the weights a step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequenceIdOf } from "../../sidecar/engine/llama/llama-internals.js";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import { generateText, loadScripted, watchBatches } from "../support/engine.js";

const SEQUENCES = 8;
// Conversations of different lengths, none sharing more than the first token with another.
const WORDS = ["Sing", "Let", "Once", "The", "A", "Llama", "Tiny", "Who"];
const conversation = (i: number): string => `${WORDS[i]} ${"la ".repeat(4 + 3 * i)}`;

describe("sequence ids side by side", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    loaded = await loadScripted({ sequences: SEQUENCES, contextSize: 1024, cacheRam: 0 });
  });
  afterAll(() => loaded?.dispose());

  const run = (prompt: string, maxTokens: number, onToken?: () => unknown) =>
    generateText(loaded, prompt, maxTokens, onToken === undefined ? {} : { onToken });

  it("gives a new stream the free sequence beside a busy one, not the one that holds the fewest tokens", async () => {
    // Every sequence holds one conversation; the shortest loses least when taken over.
    await Promise.all(WORDS.map((_, i) => run(conversation(i), 1)));
    const holder = (i: number): number => {
      // The conversation's words, after the BOS the prompt starts with.
      const tokens = loaded.model.tokenize(conversation(i).trim());
      const sequence = loaded.pool.all().find((s) => tokens.every((t, k) => s.contextTokens[k + 1] === t));
      if (sequence === undefined) throw new Error(`no sequence holds conversation ${i}`);
      return sequenceIdOf(sequence);
    };
    const shortest = holder(0);
    // The conversation that comes back is on a sequence apart from the shortest one.
    const back = WORDS.findIndex((_, i) => Math.abs(holder(i) - shortest) > 1);
    const returning = holder(back);
    const twos: number[][] = [];
    watchBatches(loaded, (_tokens, _threads, ids) => ids.length === 2 && twos.push([...ids].sort((a, b) => a - b)));
    let started = (): void => undefined;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    let seen = 0;
    const first = run(`${conversation(back)}la la`, 40, () => ++seen === 2 && started());
    await streaming;
    await run("Who are you", 6);
    await first;
    expect(twos.length).toBeGreaterThan(0);
    for (const ids of twos) {
      expect(ids).toContain(returning);
      expect(Math.abs((ids[1] ?? 0) - (ids[0] ?? 0))).toBe(1);
    }
  });
});
