// N streams started at once; the run's wall time and aggregate rate.
import type { StreamSample } from "../sample.js";

export interface ConcurrentRun {
  readonly streams: number;
  readonly wallMs: number;
  /** Tokens of completed streams per second of wall time (first request sent → last stream closed). */
  readonly aggregateTps: number;
  readonly samples: StreamSample[];
}

export async function runConcurrent(
  streams: number,
  start: (index: number) => Promise<StreamSample>,
): Promise<ConcurrentRun> {
  const t0 = performance.now();
  const samples = await Promise.all(Array.from({ length: streams }, (_, i) => start(i)));
  const wallMs = performance.now() - t0;
  const tokens = samples.filter((s) => s.outcome === "completed").reduce((sum, s) => sum + s.tokens, 0);
  return { streams, wallMs, aggregateTps: (tokens * 1000) / wallMs, samples };
}
