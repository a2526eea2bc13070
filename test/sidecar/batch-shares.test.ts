// How a batch's token slots are shared (sidecar/engine/llama/batch-shares.ts): every decode gets a token,
// the prompts closest to done the rest, never more than the batch holds; batch requests' tokens
// beside no interactive prompt, their prompts a few tokens a batch beside interactive steps.
import type { BatchItem } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { BATCH_EVALUATION_PRIORITY, BATCH_PROMPT_TOKENS, shareBatch, STREAMING_BATCH_TOKENS } from "../../sidecar/engine/llama/batch-shares.js";

const item = (tokens: number): BatchItem => ({ tokens: Array.from({ length: tokens }, () => 1) as never, logits: [], evaluationPriority: 5 });
const shares = (wants: number[], size: number): number[] => {
  const items = wants.map(item);
  const out = shareBatch({ items, size });
  // Every prioritized item is one of the given items, in their order.
  expect(out.map((p) => items.indexOf(p.item))).toEqual([...out.map((p) => items.indexOf(p.item))].sort((a, b) => a - b));
  return items.map((i) => out.find((p) => p.item === i)?.processAmount ?? 0);
};

describe("shareBatch", () => {
  it("gives each decoding stream its token, and a prompt the rest of a streaming batch", () => {
    expect(shares([1526, 1, 1], 512)).toEqual([STREAMING_BATCH_TOKENS - 2, 1, 1]);
    expect(shares([1, 1, 1526], 512)).toEqual([1, 1, STREAMING_BATCH_TOKENS - 2]);
  });

  it("fills whole batches with prompts when no stream is decoding", () => {
    expect(shares([3000], 512)).toEqual([512]);
    expect(shares([600, 600], 512)).toEqual([511, 1]);
    expect(shares([600, 10, 500], 512)).toEqual([2, 10, 500]);
  });

  it("gives what is left to the prompts with the fewest tokens left first, so prompts that arrive together finish as early as they can", () => {
    expect(shares([1, 300, 300], 512)).toEqual([1, 126, 1]);
    expect(shares([1, 1, 1], 512)).toEqual([1, 1, 1]);
    // One stream decoding, seven 29-token prompts: four finish in this batch (split evenly, none would).
    expect(shares([1, 29, 29, 29, 29, 29, 29, 29], 512)).toEqual([1, 29, 29, 29, 29, 9, 1, 1]);
    expect(shares([1, 40, 20, 29], 512)).toEqual([1, 40, 20, 29]);
    expect(shares([1, 200, 20, 29], 512)).toEqual([1, 78, 20, 29]);
  });

  it("never hands out more than the batch holds", () => {
    expect(shares([1, 1, 1, 1], 3)).toEqual([1, 1, 1, 0]);
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 500; round++) {
      const wants = Array.from({ length: 1 + next(10) }, () => (next(3) === 0 ? 1 : 1 + next(2000)));
      const size = 1 + next(600);
      const got = shares(wants, size);
      expect(got.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(size);
      got.forEach((amount, i) => {
        expect(amount).toBeLessThanOrEqual(wants[i] ?? 0);
      });
      // Nothing is left unused while an item still wants tokens.
      const budget = wants.includes(1) ? Math.min(size, STREAMING_BATCH_TOKENS) : size;
      if (got.reduce((a, b) => a + b, 0) < budget) expect(got).toEqual(wants);
    }
  });

  it("gives a batch request's tokens no slot while an interactive prompt is evaluated, and its prompt few beside interactive steps", () => {
    // Wants by item: a positive number is interactive, a negative one a batch request's.
    const mixed = (wants: number[], size: number): number[] => {
      const items = wants.map((w) => ({ ...item(Math.abs(w)), evaluationPriority: w < 0 ? BATCH_EVALUATION_PRIORITY : 5 }) as BatchItem);
      const out = shareBatch({ items, size });
      return items.map((i) => out.find((p) => p.item === i)?.processAmount ?? 0);
    };
    // An interactive prompt: batch steps and prompts wait.
    expect(mixed([1, 30, -1, -1], 512)).toEqual([1, 30, 0, 0]);
    expect(mixed([-40, 30], 512)).toEqual([0, 30]);
    // Interactive steps: batch steps go beside them, a batch prompt BATCH_PROMPT_TOKENS beyond its first.
    expect(mixed([1, -1, -40], 512)).toEqual([1, 1, 1 + BATCH_PROMPT_TOKENS]);
    // Two batch prompts share those slots, the one closest to done first.
    expect(mixed([1, -10, -40], 512)).toEqual([1, 10, 1 + BATCH_PROMPT_TOKENS - 9]);
    // No interactive item: batch items share as any.
    expect(mixed([-1, -40], 512)).toEqual([1, 40]);
  });
});
