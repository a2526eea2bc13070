// What one more token in a decode step costs (sidecar/engine/llama/step-cost.ts): the line through the timed steps'
// sizes, and the drafted tokens worth that cost.
import { describe, expect, it } from "vitest";
import { draftWorth, MAX_TIMED_TOKENS, StepCost } from "../../sidecar/engine/llama/step-cost.js";

describe("the step cost", () => {
  it("is unknown until steps of two sizes were timed, then the line through their means", () => {
    const cost = new StepCost();
    for (let i = 0; i < 5; i++) cost.observe(1, 10);
    expect(cost.times).toBeUndefined();
    cost.observe(4, 22);
    expect(cost.times?.fixedMs).toBeCloseTo(6, 6);
    expect(cost.times?.perTokenMs).toBeCloseTo(4, 6);
  });

  it("reads a size's recent steps by their median: a preempted step does not move it", () => {
    const cost = new StepCost();
    cost.observe(1, 10);
    for (const ms of [14, 14, 14, 200, 14]) cost.observe(2, ms);
    expect(cost.times?.perTokenMs).toBeCloseTo(4, 6);
    // The last 16 of a size count: newer steps take over.
    for (let i = 0; i < 16; i++) cost.observe(2, 18);
    expect(cost.times?.perTokenMs).toBeCloseTo(8, 6);
    const before = cost.times;
    cost.observe(MAX_TIMED_TOKENS + 1, 5000);
    cost.observe(3, Number.NaN);
    cost.observe(0, 1);
    expect(cost.times).toEqual(before);
  });

  it("never says a token costs less than nothing", () => {
    const cost = new StepCost();
    cost.observe(1, 12);
    cost.observe(2, 11);
    expect(cost.times).toEqual({ fixedMs: 11.5, perTokenMs: 0 });
  });
});

describe("the drafted tokens worth checking", () => {
  // An 850M-class F16 model on 2 CPU cores: a step of 1 token 42 ms, of 4 tokens 69 ms.
  const f16 = { fixedMs: 33, perTokenMs: 9 };
  // The same at Q4_K_M: 17 and 52 ms.
  const q4 = { fixedMs: 5.3, perTokenMs: 11.7 };

  it("drafts while the chance a drafted token is taken beats its share of a step", () => {
    // A token costs 9 of 42 ms (0.21): at a rate of one half, 2 tokens (0.25 ≥ 0.21 > 0.125).
    expect(draftWorth(f16, 0.5, 16)).toBe(2);
    expect(draftWorth(f16, 0.3, 16)).toBe(1);
    expect(draftWorth(f16, 0.9, 16)).toBe(14);
    // Quantized weights on a CPU: a token is most of the step (0.69); a reply repeating text (0.97) still drafts.
    expect(draftWorth(q4, 0.5, 16)).toBe(0);
    expect(draftWorth(q4, 0.97, 16)).toBe(12);
    expect(draftWorth(q4, 1, 16)).toBe(16);
  });

  it("drafts up to the most it may where nothing was measured or a token costs nothing", () => {
    expect(draftWorth(undefined, 0.1, 16)).toBe(16);
    expect(draftWorth({ fixedMs: 20, perTokenMs: 0 }, 0.1, 8)).toBe(8);
    expect(draftWorth(f16, 0.999, 16)).toBe(16);
    expect(draftWorth(f16, 0, 16)).toBe(0);
  });
});
