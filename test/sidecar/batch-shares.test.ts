// How a batch's token slots are shared (sidecar/engine/llama/batch-shares.ts): every decode gets a token,
// the prompts closest to done the rest, never more than the batch holds; batch requests' tokens
// beside no interactive prompt, their prompts a few tokens a batch beside interactive steps.
import type { BatchItem } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import {
  BATCH_EVALUATION_PRIORITY,
  BATCH_PROMPT_TOKENS,
  cpuPromptBatchTokens,
  shareBatchOf,
  STREAMING_BATCH_TOKENS,
} from "../../sidecar/engine/llama/batch-shares.js";

const item = (tokens: number): BatchItem => ({
  tokens: Array.from({ length: tokens }, () => 1) as never,
  logits: [],
  evaluationPriority: 5,
});
/** Every prompt in one batch as far as it holds: a GPU's sharing, and a small model's on a CPU. */
const shareBatch = shareBatchOf();
const shares = (wants: number[], size: number, share = shareBatch): number[] => {
  const items = wants.map(item);
  const out = share({ items, size });
  // Every prioritized item is one of the given items, in their order.
  expect(out.map((p) => items.indexOf(p.item))).toEqual(
    [...out.map((p) => items.indexOf(p.item))].sort((a, b) => a - b),
  );
  return items.map((i) => out.find((p) => p.item === i)?.processAmount ?? 0);
};

/** A seeded generator of whole numbers below `n`, the same every run. */
const seeded = (start: number): ((n: number) => number) => {
  let seed = start;
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
};

describe("shareBatchOf(), unbounded", () => {
  it("gives each decoding stream its token, and a prompt the rest of a streaming batch", () => {
    expect(shares([1526, 1, 1], 512)).toEqual([STREAMING_BATCH_TOKENS - 2, 1, 1]);
    expect(shares([1, 1, 1526], 512)).toEqual([1, 1, STREAMING_BATCH_TOKENS - 2]);
  });

  it("fills whole batches with prompts when no stream is decoding", () => {
    expect(shares([3000], 512)).toEqual([512]);
    expect(shares([600, 600], 512)).toEqual([511, 1]);
    expect(shares([600, 10, 500], 512)).toEqual([2, 10, 500]);
  });

  it(
    "gives what is left to the prompts with the fewest tokens left first, so prompts that arrive together finish as " +
      "early as they can",
    () => {
      expect(shares([1, 300, 300], 512)).toEqual([1, 126, 1]);
      expect(shares([1, 1, 1], 512)).toEqual([1, 1, 1]);
      // One stream decoding, seven 29-token prompts: four finish in this batch (split evenly, none would).
      expect(shares([1, 29, 29, 29, 29, 29, 29, 29], 512)).toEqual([1, 29, 29, 29, 29, 9, 1, 1]);
      expect(shares([1, 40, 20, 29], 512)).toEqual([1, 40, 20, 29]);
      expect(shares([1, 200, 20, 29], 512)).toEqual([1, 78, 20, 29]);
    },
  );

  it("never hands out more than the batch holds", () => {
    expect(shares([1, 1, 1, 1], 3)).toEqual([1, 1, 1, 0]);
    const next = seeded(7);
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

  it(
    "gives a batch request's tokens no slot while an interactive prompt is evaluated, and its prompt few beside " +
      "interactive steps",
    () => {
      // Wants by item: a positive number is interactive, a negative one a batch request's.
      const mixed = (wants: number[], size: number): number[] => {
        const items = wants.map(
          (w) => ({ ...item(Math.abs(w)), evaluationPriority: w < 0 ? BATCH_EVALUATION_PRIORITY : 5 }) as BatchItem,
        );
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
    },
  );

  describe("on a CPU and a large model: a prompt joins another's batch only whole and within its bound", () => {
    // The 850M-class model's bound.
    const BOUND = 64;
    const cpu = shareBatchOf(BOUND);
    it("is 64 tokens for the 850M-class model, and holds every prompt of a small model", () => {
      expect(cpuPromptBatchTokens(1_705_912_096)).toBe(BOUND);
      expect(cpuPromptBatchTokens(4_000_000_000)).toBe(27);
      expect(cpuPromptBatchTokens(120_749_664)).toBeGreaterThan(900);
    });

    it("four 24-token prompts at once go two by two, the two on the lowest sequences first", () => {
      expect(shares([24, 24, 24, 24], 512, cpu)).toEqual([24, 24, 0, 0]);
      // The next batch: the first two's next tokens, and the other two prompts.
      expect(shares([1, 1, 24, 24], 512, cpu)).toEqual([1, 1, 24, 24]);
    });

    it("takes the prompts with the fewest tokens left first; a long one then waits its turn", () => {
      expect(shares([3000, 10, 20, 40], 512, cpu)).toEqual([0, 10, 20, 0]);
      expect(shares([3000, 40], 512, cpu)).toEqual([0, 40]);
      expect(shares([3000], 512, cpu)).toEqual([512]);
      // A long prompt first in line takes the batch alone, beside the streams' steps.
      expect(shares([1, 1500, 1500], 512, cpu)).toEqual([1, STREAMING_BATCH_TOKENS - 1, 0]);
    });

    it("gives a prompt with one token left (its prefix cached) that token at once, as a stream's step", () => {
      expect(shares([1, 60, 1, 30], 512, cpu)).toEqual([1, 0, 1, 30]);
      expect(shares([64, 1], 512, cpu)).toEqual([64, 1]);
    });

    it("leaves a second prompt out rather than cut it where the batch is full", () => {
      expect(shares([20, 20], 30, cpu)).toEqual([20, 0]);
    });

    it("never hands out more than the batch holds, and more than one prompt only within the bound", () => {
      const next = seeded(11);
      for (let round = 0; round < 500; round++) {
        const wants = Array.from({ length: 1 + next(8) }, () => (next(3) === 0 ? 1 : 2 + next(100)));
        const size = 1 + next(600);
        const got = shares(wants, size, cpu);
        expect(got.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(size);
        const prompts = wants.flatMap((want, i) => (want > 1 && (got[i] ?? 0) > 0 ? [{ want, got: got[i] ?? 0 }] : []));
        // More than one prompt only within the bound, each of them whole but the one closest to done.
        if (prompts.length > 1) {
          expect(prompts.reduce((sum, p) => sum + p.got, 0)).toBeLessThanOrEqual(BOUND);
          const closest = Math.min(...prompts.map((p) => p.want));
          expect(prompts.filter((p) => p.got < p.want).every((p) => p.want === closest)).toBe(true);
        }
        got.forEach((amount, i) => {
          expect(amount).toBeLessThanOrEqual(wants[i] ?? 0);
        });
      }
    });
  });
});
