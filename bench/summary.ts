// Raw samples → the figures the table shows and the targets (targets.ts).
import type { PartyKey } from "./parties.js";
import type { PeerVariant } from "./peer-paths.js";
import { decodeRate, type StreamSample } from "./sample.js";
import type { ConcurrentRun } from "./sections/concurrent.js";
import type { PrefixResult } from "./sections/prefix.js";
import type { SingleResult } from "./sections/single.js";
import type { SweepResult } from "./sections/sweep.js";
import { max, mean, median, min, quantile } from "./stats.js";

export interface PartySummary {
  readonly key: PartyKey;
  readonly label: string;
  readonly runs: number;
  readonly completed: number;
  readonly tokens: number;
  readonly decodeTps: number;
  readonly decodeTpsMin: number;
  readonly decodeTpsMax: number;
  readonly ttftMs: number;
  /** Median time to the server's acceptance (headers / start event / sequence ready in-process). */
  readonly acceptedMs: number;
  /** Median prompt time the server reports itself (sidecar Finish.timings, llama-server timings). */
  readonly serverPromptMs: number;
  /** Median decode rate / (a)'s. */
  readonly decodeRatio: number;
  /** Median TTFT − (a)'s. */
  readonly addedTtftMs: number;
  /** Median decode rate / each llama-server build's (NaN where it did not run). */
  readonly decodeVsPeer: Readonly<Record<PeerVariant, number>>;
  /** Median TTFT − each llama-server build's, ms. */
  readonly ttftVsPeerMs: Readonly<Record<PeerVariant, number>>;
  /** CPU ms per generated token, by process role (all measured runs together). */
  readonly cpuMsPerToken: Record<string, number>;
}

export function summarizeSingle(single: SingleResult): PartySummary[] {
  const rows = single.parties.map((p) => {
    const done = p.samples.filter((s) => s.outcome === "completed");
    const rates = done.map(decodeRate);
    const tokens = p.samples.reduce((n, s) => n + s.tokens, 0);
    const cpuMsPerToken = Object.fromEntries(
      Object.entries(p.cpuMs).map(([role, ms]) => [role, ms / Math.max(1, tokens)]),
    );
    return {
      key: p.key,
      cpuMsPerToken,
      label: p.label,
      runs: p.samples.length,
      completed: done.length,
      tokens: median(done.map((s) => s.tokens)),
      decodeTps: median(rates),
      decodeTpsMin: min(rates),
      decodeTpsMax: max(rates),
      ttftMs: median(done.map((s) => s.ttftMs)),
      acceptedMs: median(done.map((s) => s.acceptedMs ?? Number.NaN)),
      serverPromptMs: median(done.map((s) => s.serverPromptMs ?? Number.NaN)),
    };
  });
  const a = rows.find((r) => r.key === "a");
  const peer = (variant: PeerVariant): { decodeTps: number; ttftMs: number } =>
    rows.find((r) => r.key === `peer-${variant}`) ?? { decodeTps: Number.NaN, ttftMs: Number.NaN };
  const [byDefault, prebuilt] = [peer("default"), peer("prebuilt")];
  return rows.map((r) => ({
    ...r,
    decodeRatio: a ? r.decodeTps / a.decodeTps : Number.NaN,
    addedTtftMs: a ? r.ttftMs - a.ttftMs : Number.NaN,
    decodeVsPeer: { default: r.decodeTps / byDefault.decodeTps, prebuilt: r.decodeTps / prebuilt.decodeTps },
    ttftVsPeerMs: { default: r.ttftMs - byDefault.ttftMs, prebuilt: r.ttftMs - prebuilt.ttftMs },
  }));
}

export interface LevelSummary {
  readonly streams: number;
  readonly runs: number;
  readonly aggregateTps: number;
  readonly aggregateTpsAll: number[];
  readonly streamTpsMin: number;
  readonly streamTpsMean: number;
  readonly streamTpsMax: number;
  /** Worst over runs of max(rate / run mean, run mean / rate): 1 is perfectly even. */
  readonly worstSpread: number;
  readonly ttftP50: number;
  readonly ttftP99: number;
  readonly completed: number;
  readonly rejected: number;
  readonly failed: number;
  readonly hung: number;
  /** Longest time to a 429 (ms), if any stream was rejected. */
  readonly maxRejectMs: number;
}

export function summarizeLevel(runs: readonly ConcurrentRun[]): LevelSummary {
  const samples = runs.flatMap((r) => r.samples);
  const done = samples.filter((s) => s.outcome === "completed");
  const rates = done.map(decodeRate);
  let worstSpread = Number.NaN;
  for (const run of runs) {
    const runRates = run.samples.filter((s) => s.outcome === "completed").map(decodeRate);
    const m = mean(runRates);
    const spread = Math.max(max(runRates) / m, m / min(runRates));
    if (Number.isFinite(spread)) worstSpread = Number.isNaN(worstSpread) ? spread : Math.max(worstSpread, spread);
  }
  const count = (o: StreamSample["outcome"]): number => samples.filter((s) => s.outcome === o).length;
  const rejected = samples.filter((s) => s.outcome === "rejected");
  return {
    streams: runs[0]?.streams ?? 0,
    runs: runs.length,
    aggregateTps: median(runs.map((r) => r.aggregateTps)),
    aggregateTpsAll: runs.map((r) => r.aggregateTps),
    streamTpsMin: min(rates),
    streamTpsMean: mean(rates),
    streamTpsMax: max(rates),
    worstSpread,
    ttftP50: quantile(
      done.map((s) => s.ttftMs),
      0.5,
    ),
    ttftP99: quantile(
      done.map((s) => s.ttftMs),
      0.99,
    ),
    completed: done.length,
    rejected: rejected.length,
    failed: count("failed"),
    hung: count("hung"),
    maxRejectMs: rejected.length > 0 ? max(rejected.map((s) => s.totalMs)) : Number.NaN,
  };
}

/** The sweep's levels through the edge and each peer's (llama-server build's). */
export interface SweepSummary {
  readonly edge: LevelSummary[];
  readonly peers: { readonly label: string; readonly levels: LevelSummary[] }[];
}

export function summarizeSweep(sweep: SweepResult): SweepSummary {
  const levels = (by: Record<string, ConcurrentRun[]>): LevelSummary[] =>
    Object.keys(by)
      .map(Number)
      .sort((x, y) => x - y)
      .map((level) => summarizeLevel(by[level] ?? []));
  return { edge: levels(sweep.edge), peers: sweep.peers.map((p) => ({ label: p.label, levels: levels(p.runs) })) };
}

export interface PrefixRow {
  readonly path: "grpc" | "edge";
  readonly kind: "cold" | "warm";
  readonly requests: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** The sidecar's own prompt time (Finish.timings.promptMs; gRPC only). */
  readonly enginePromptMs: number;
  readonly ttftMs: number;
}

export function summarizePrefix(prefix: PrefixResult): PrefixRow[] {
  const rows: PrefixRow[] = [];
  for (const path of ["grpc", "edge"] as const) {
    for (const kind of ["cold", "warm"] as const) {
      const samples = prefix[path][kind].filter((s) => s.outcome === "completed");
      rows.push({
        path,
        kind,
        requests: samples.length,
        promptTokens: median(samples.map((s) => s.promptTokens ?? Number.NaN)),
        cachedTokens: median(samples.map((s) => s.cachedTokens ?? Number.NaN)),
        enginePromptMs: median(samples.map((s) => s.serverPromptMs ?? Number.NaN)),
        ttftMs: median(samples.map((s) => s.ttftMs)),
      });
    }
  }
  return rows;
}

export interface Target {
  readonly name: string;
  readonly measured: string;
  readonly needed: string;
  /** undefined: not measured in this run. */
  readonly pass: boolean | undefined;
}
