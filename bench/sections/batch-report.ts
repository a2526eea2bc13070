// The batch section's summary, table, targets and headline figures (batch.ts measures).
import type { StreamSample } from "../sample.js";
import { quantile } from "../stats.js";
import type { Target } from "../summary.js";
import { fmt } from "../table.js";
import type { BatchResult } from "./batch.js";

/**
 * TTFT p50/p99 and the median decode rate (first to last token) of completed streams, and how many did not complete.
 */
function ttft(samples: readonly StreamSample[]): {
  p50: number;
  p99: number;
  decodeTps: number;
  n: number;
  odd: number;
} {
  const completed = samples.filter((s) => s.outcome === "completed");
  const done = completed.map((s) => s.ttftMs);
  const rates = completed.filter((s) => s.tokens > 1).map((s) => ((s.tokens - 1) * 1000) / (s.lastTokenMs - s.ttftMs));
  return {
    p50: quantile(done, 0.5),
    p99: quantile(done, 0.99),
    decodeTps: quantile(rates, 0.5),
    n: done.length,
    odd: samples.length - done.length,
  };
}

export interface BatchSummary {
  readonly alone: ReturnType<typeof ttft>;
  readonly withBatch: ReturnType<typeof ttft>;
  readonly p50Ratio: number;
  readonly p99Ratio: number;
  readonly idleLinesPerMinute: number;
  readonly idleTokensPerSecond: number;
}

export function summarizeBatch(r: BatchResult): BatchSummary {
  const alone = ttft(r.alone);
  const withBatch = ttft(r.withBatch);
  return {
    alone,
    withBatch,
    p50Ratio: withBatch.p50 / alone.p50,
    p99Ratio: withBatch.p99 / alone.p99,
    idleLinesPerMinute: (r.idle.lines * 60_000) / r.idle.wallMs,
    idleTokensPerSecond: (r.idle.tokens * 1000) / r.idle.wallMs,
  };
}

export function renderBatch(s: BatchSummary, r: BatchResult): string {
  const o = r.options;
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  const header = [
    "interactive streams",
    "streams",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "decode tok/s per stream (p50)",
    "not completed",
  ];
  const row = (label: string, t: BatchSummary["alone"]) =>
    line([label, String(t.n), fmt(t.p50), fmt(t.p99), fmt(t.decodeTps), String(t.odd)]);
  const lines = (label: string, b: BatchResult["idle"]) =>
    `${label}: ${b.lines} lines (${b.failed} failed, ${b.retries} preempted and sent again), ${fmt(b.wallMs / 1000)} s`;
  return [
    `\n**Batch lines in idle capacity** (PRIORITY_BATCH generations of ${o.lineTokens} tokens straight to the ` +
      `sidecar over ` +
      `native gRPC, ${o.inFlight} in flight, preempted ones sent again; ${o.streams} interactive streams at once ` +
      `through the ` +
      `edge, ${o.rounds} rounds alone and ${o.rounds} with batch lines in flight, interleaved)\n`,
    line(header),
    line(header.map(() => "---")),
    row("alone", s.alone),
    row("with batch lines running", s.withBatch),
    line([
      "with / alone",
      "–",
      `${fmt(s.p50Ratio, 2)}×`,
      `${fmt(s.p99Ratio, 2)}×`,
      `${fmt(s.withBatch.decodeTps / s.alone.decodeTps, 2)}×`,
      "–",
    ]),
    "",
    `${lines("The batch alone", r.idle)}: ${fmt(s.idleLinesPerMinute, 0)} lines/min, ${fmt(s.idleTokensPerSecond)} ` +
      `tok/s.`,
    `${lines("The batch beside the interactive rounds (its rest after them)", r.beside)}.`,
  ].join("\n");
}

export function batchTargets(s: BatchSummary): Target[] {
  const ok = (ratio: number) => (Number.isFinite(ratio) ? ratio <= 1.1 : undefined);
  return [
    {
      name: "interactive TTFT p50 at 4 streams, a batch running vs not",
      measured: `${fmt(s.p50Ratio, 2)}× (${fmt(s.withBatch.p50)} vs ${fmt(s.alone.p50)} ms)`,
      needed: "≤ 1.10×",
      pass: ok(s.p50Ratio),
    },
    {
      name: "interactive TTFT p99 at 4 streams, a batch running vs not",
      measured: `${fmt(s.p99Ratio, 2)}× (${fmt(s.withBatch.p99)} vs ${fmt(s.alone.p99)} ms)`,
      needed: "≤ 1.10×",
      pass: ok(s.p99Ratio),
    },
  ];
}

export function batchHeadline(s: BatchSummary, headline: Record<string, number>): void {
  headline["batch: interactive TTFT p50 ratio with/without"] = s.p50Ratio;
  headline["batch: interactive TTFT p99 ratio with/without"] = s.p99Ratio;
  headline["batch: interactive decode tok/s ratio with/without"] = s.withBatch.decodeTps / s.alone.decodeTps;
  headline["batch: idle lines/min"] = s.idleLinesPerMinute;
  headline["batch: idle tok/s"] = s.idleTokensPerSecond;
}
