// The benchmark's batch section (bench/sections/batch.ts, batch-report.ts): its flags, the figures
// it draws from its samples (interactive TTFT and decode rate with and without batch lines, the
// batch's idle throughput), its targets and headline. Pure functions only: nothing is started.
import { describe, expect, it } from "vitest";
import { readFlags, SECTIONS, type BenchFlags } from "../bench/flags.js";
import type { StreamSample } from "../bench/sample.js";
import type { BatchResult } from "../bench/sections/batch.js";
import { batchHeadline, batchTargets, renderBatch, summarizeBatch } from "../bench/sections/batch-report.js";

/** A completed stream: first token at `ttft` ms, 11 tokens, the last 100 ms later (100 tok/s). */
const sample = (ttft: number, decodeMs = 100): StreamSample => ({
  outcome: "completed",
  status: 200,
  ttftMs: ttft,
  lastTokenMs: ttft + decodeMs,
  totalMs: ttft + decodeMs,
  tokens: 11,
});

function flagsOf(argv: readonly string[]): BenchFlags {
  const flags = readFlags(argv);
  if (flags === "help") throw new Error("help");
  return flags;
}

const result: BatchResult = {
  options: { lines: 200, lineTokens: 32, inFlight: 8, streams: 4, rounds: 1, timeoutMs: 1000 },
  idle: { lines: 200, failed: 0, retries: 0, tokens: 6400, wallMs: 60_000 },
  beside: { lines: 200, failed: 0, retries: 12, tokens: 6400, wallMs: 90_000 },
  alone: [sample(40), sample(50), sample(60), sample(70)],
  withBatch: [sample(44), sample(55), sample(66), sample(77, 125)],
};

describe("the batch section", () => {
  it("is a section of its own with 200 lines of 32 tokens by default", () => {
    expect(SECTIONS).toContain("batch");
    expect(flagsOf(["--sections", "batch"])).toMatchObject({
      sections: ["batch"],
      batchLines: 200,
      batchTokens: 32,
      batchRounds: 8,
    });
    expect(flagsOf(["--quick", "--batch-lines", "10", "--batch-tokens", "8", "--batch-rounds", "3"])).toMatchObject({
      batchLines: 10,
      batchTokens: 8,
      batchRounds: 3,
    });
  });

  it("compares interactive TTFT and decode rate with and without the batch, and the batch's idle rate", () => {
    const s = summarizeBatch(result);
    expect(s.alone).toMatchObject({ p50: 55, n: 4, odd: 0, decodeTps: 100 });
    expect(s.withBatch).toMatchObject({ p50: 60.5, n: 4, odd: 0, decodeTps: 100 });
    expect(s.p50Ratio).toBeCloseTo(1.1, 10);
    expect([s.idleLinesPerMinute, s.idleTokensPerSecond]).toEqual([200, 6400 / 60]);
    const headline: Record<string, number> = {};
    batchHeadline(s, headline);
    expect(headline["batch: idle lines/min"]).toBe(200);
    expect(headline["batch: interactive decode tok/s ratio with/without"]).toBe(1);
    const table = renderBatch(s, result);
    expect(table).toContain("| with / alone | – | 1.10× |");
    expect(table).toContain(
      "The batch alone: 200 lines (0 failed, 0 preempted and sent again), 60.0 s: 200 lines/min, 106.7 tok/s.",
    );
    expect(table).toContain("(0 failed, 12 preempted and sent again), 90.0 s.");
  });

  it("passes its targets within 10% and fails them beyond", () => {
    const s = summarizeBatch(result);
    expect(batchTargets(s).map((t) => t.pass)).toEqual([true, s.p99Ratio <= 1.1]);
    const slow = summarizeBatch({ ...result, withBatch: result.alone.map((a) => sample(a.ttftMs * 1.2)) });
    expect(batchTargets(slow).map((t) => t.pass)).toEqual([false, false]);
  });
});
