// The benchmark's many-models section (bench/sections/many-models.ts): its flags, the figures it draws
// from its samples (load on demand, the catalogue's cost by pairs), its targets and headline. Pure
// functions only: nothing is started.
import { describe, expect, it } from "vitest";
import { medianInterval } from "../bench/stats.js";
import { readFlags, SECTIONS, type BenchFlags } from "../bench/flags.js";
import type { StreamSample } from "../bench/sample.js";
import { modelsHeadline, renderModels, summarizeModels, type ModelsResult } from "../bench/sections/many-models.js";
import { evaluateTargets } from "../bench/targets.js";

/** A completed stream: first token at `ttft` ms, `tokens` tokens, the last at `last` ms. */
const sample = (ttft: number, tokens = 2, last = ttft + 10): StreamSample => ({
  outcome: "completed",
  status: 200,
  ttftMs: ttft,
  lastTokenMs: last,
  totalMs: last,
  tokens,
});
const failed: StreamSample = {
  outcome: "failed",
  status: 500,
  ttftMs: Number.NaN,
  lastTokenMs: Number.NaN,
  totalMs: 5,
  tokens: 0,
};

function flagsOf(argv: readonly string[]): BenchFlags {
  const flags = readFlags(argv);
  if (flags === "help") throw new Error("help");
  return flags;
}

const options = { model: "random-60m", other: "demo", runs: 3, requests: 3, maxTokens: 101, timeoutMs: 1000 };

// Three rounds; three pairs, the last one's second request failed. 101 tokens: 100 after the first.
const result: ModelsResult = {
  options,
  rounds: [
    { loadMs: 500, firstRequest: sample(540), loaded: sample(30) },
    { loadMs: 700, firstRequest: sample(760), loaded: sample(40) },
    { loadMs: 600, firstRequest: sample(650), loaded: sample(20) },
  ],
  memoryBytes: 436 * 2 ** 20,
  oneModel: [sample(20, 101, 1020), sample(22, 101, 1272), sample(21, 101, 521)],
  twoModels: [sample(21, 101, 1021), sample(22.5, 101, 1272.5), failed],
};

describe("the many-models section", () => {
  it("is a section of its own with bounded counts and demo as the second model", () => {
    expect(SECTIONS).toContain("models");
    expect(flagsOf([])).toMatchObject({ modelsRuns: 9, modelsRequests: 16, modelsOther: "demo" });
    expect(flagsOf(["--quick"])).toMatchObject({ modelsRuns: 3, modelsRequests: 4 });
    expect(
      flagsOf([
        "--sections",
        "models",
        "--models-runs",
        "2",
        "--models-requests",
        "5",
        "--models-other",
        "random-tiny",
      ]),
    ).toMatchObject({
      sections: ["models"],
      modelsRuns: 2,
      modelsRequests: 5,
      modelsOther: "random-tiny",
    });
    expect(() => flagsOf(["--models-runs", "0"])).toThrow('--models-runs must be an integer of at least 1, got "0"');
  });

  it("sets the load alone and the loaded TTFT against the first request's, medians and ranges", () => {
    const s = summarizeModels(result);
    expect(s.load).toEqual({ n: 3, p50: 600, min: 500, max: 700 });
    expect(s.firstRequestTtft).toEqual({ n: 3, p50: 650, min: 540, max: 760 });
    expect(s.loadedTtft).toEqual({ n: 3, p50: 30, min: 20, max: 40 });
    expect(s.overheadMs).toBe(20);
    expect(s.memoryMiB).toBe(436);
  });

  it("compares the catalogues by the pairs both completed", () => {
    const s = summarizeModels(result);
    expect(s.oneModel).toEqual({
      label: "random-60m alone (loaded at start)",
      completed: "3 / 3",
      ttftP50: 21,
      decodeTps: { n: 3, p50: 100, min: 80, max: 200 },
    });
    expect(s.twoModels.completed).toBe("2 / 3");
    // Pairs: +1 ms at 100 vs 100 tok/s, +0.5 ms at 80 vs 80 tok/s.
    expect([s.pairs, s.addedTtftMs, s.decodeRatio, s.addedTtftInterval, s.decodeRatioInterval]).toEqual([
      2,
      0.75,
      1,
      [0.5, 1],
      [1, 1],
    ]);
    const row = "| random-60m and demo (random-60m loaded, demo available) | 2 / 3 | 21.8 | 90.0 (80.0–100.0) |";
    expect(renderModels(s, result)).toContain(`${row} +0.75 ms (+0.50 to +1.00); 1.000× (1.000 to 1.000); 2 pairs |`);
  });

  it("passes the targets at ≤ +1 ms and a decode ratio whose interval reaches 1.0×, and fails them beyond", () => {
    const targets = (r: ModelsResult) =>
      evaluateTargets({ models: summarizeModels(r), concurrent: 8 }).filter((t) => t.name.startsWith("many models"));
    expect(targets(result)).toEqual([
      {
        name: "many models: TTFT with a second model in the catalogue vs the model alone",
        measured: "0.75 ms (median of 2 pairs, 95% interval +0.50 to +1.00 ms; p50 21.8 vs 21.0)",
        needed: "≤ +1 ms",
        pass: true,
      },
      {
        name: "many models: decode tok/s with a second model in the catalogue vs the model alone",
        measured: "1.000× (median of 2 pairs, 95% interval 1.000 to 1.000; p50 90.0 vs 100.0)",
        needed: "upper end of the 95% interval ≥ 1.0×",
        pass: true,
      },
    ]);
    // Both pairs 2 ms later and at 0.96× the rate (96 instead of 100 tok/s, 76.8 instead of 80).
    const slower = {
      ...result,
      oneModel: result.oneModel.slice(0, 2),
      twoModels: [sample(22, 101, 22 + 100_000 / 96), sample(24, 101, 24 + 100_000 / 76.8)],
    };
    expect(targets(slower).map((t) => t.pass)).toEqual([false, false]);
    expect(summarizeModels(slower).decodeRatioInterval.map((v) => v.toFixed(6))).toEqual(["0.960000", "0.960000"]);
    expect(evaluateTargets({ concurrent: 8 }).some((t) => t.name.startsWith("many models"))).toBe(false);
  });

  it("bounds the median of the pairs by the sign test's order statistics, the whole range below 6 pairs", () => {
    const ratios = Array.from({ length: 16 }, (_, i) => 0.9 + i / 100);
    // 16 pairs: the 4th and 13th of them (97.9% coverage); 9: the 2nd and 8th; 30: the 10th and 21st.
    expect(medianInterval(ratios)).toEqual([ratios[3], ratios[12]]);
    expect(medianInterval(ratios.slice(0, 9))).toEqual([ratios[1], ratios[7]]);
    expect(medianInterval(Array.from({ length: 30 }, (_, i) => i + 1))).toEqual([10, 21]);
    expect(medianInterval([3, 1, 2])).toEqual([1, 3]);
    expect(medianInterval([])).toEqual([Number.NaN, Number.NaN]);
  });

  it("names its headline figures for the comparison with the previous run", () => {
    const headline: Record<string, number> = {};
    modelsHeadline(summarizeModels(result), headline);
    expect(headline).toMatchObject({
      "models: load alone ms": 600,
      "models: first request TTFT, unloaded, ms": 650,
      "models: TTFT loaded ms": 30,
      "models: overhead of loading on demand ms": 20,
      "models: catalogue's added TTFT ms (pairs)": 0.75,
      "models: catalogue's decode ratio (pairs)": 1,
    });
  });
});
