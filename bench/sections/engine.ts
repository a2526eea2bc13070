// The engine builds side by side, so the effect of the local build shows: the in-process
// baseline on node-llama-cpp's prebuilt library and on this host's own build (`npm run
// build:engine`, the thread-pool patch), each on 1 and on 2 threads and on 1 thread with 2 for
// batches of several tokens (sidecar/engine/llama/batch-threads.ts), one stream and N streams at
// once. Rounds are interleaved (each round runs every build once, in a rotated order), and nothing
// else runs meanwhile.
import type { Child } from "../children.js";
import { inProcessParty, type Workload } from "../parties.js";
import { decodeRate, type StreamSample } from "../sample.js";
import { median } from "../stats.js";
import { runConcurrent, type ConcurrentRun } from "./concurrent.js";

export interface EngineParty {
  readonly library: string;
  readonly threads: number;
  readonly threadsBatch: number;
  readonly child: Child<unknown>;
}

export interface EngineResult {
  readonly streams: number;
  readonly rounds: number;
  readonly parties: { library: string; threads: string; single: StreamSample[]; concurrent: ConcurrentRun[] }[];
}

export interface EngineRow {
  readonly library: string;
  /** "1", "2", "1, batches 2" (threadsLabel). */
  readonly threads: string;
  /** Decode tok/s of one stream (the first token excluded), median over the rounds. */
  readonly singleTps: number;
  /** Aggregate tok/s of `streams` streams at once, median over the rounds. */
  readonly concurrentTps: number;
}

/** Prompt variants of this section: apart from the other sections' (three-digit, 9000, 10000+). */
const VARIANT_BASE = 20_000;

export async function runEngine(
  parties: readonly EngineParty[],
  w: Workload,
  streams: number,
  rounds: number,
  log: (m: string) => void,
): Promise<EngineResult> {
  const result: EngineResult = {
    streams,
    rounds,
    parties: parties.map((p) => ({
      library: p.library,
      threads: threadsLabel(p.threads, p.threadsBatch),
      single: [],
      concurrent: [],
    })),
  };
  let variant = VARIANT_BASE;
  // One discarded warm-up each.
  for (const p of parties) await inProcessParty(p.child, w).run(variant++);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < parties.length; k++) {
      const index = (k + round) % parties.length;
      const party = parties[index];
      const into = result.parties[index];
      if (party === undefined || into === undefined) continue;
      const run = inProcessParty(party.child, w);
      into.single.push(await run.run(variant++));
      const base = variant;
      variant += streams;
      into.concurrent.push(await runConcurrent(streams, (i) => run.run(base + i)));
    }
    log(`engine round ${round + 1}/${rounds} done`);
  }
  return result;
}

export function summarizeEngine(result: EngineResult): EngineRow[] {
  return result.parties.map((p) => ({
    library: p.library,
    threads: p.threads,
    singleTps: median(p.single.filter((s) => s.outcome === "completed").map(decodeRate)),
    concurrentTps: median(p.concurrent.map((c) => c.aggregateTps)),
  }));
}

/** "1 thread", "2 threads", "1 thread, 2 for batches". */
export function threadsLabel(threads: number, threadsBatch: number): string {
  const base = `${threads} thread${threads === 1 ? "" : "s"}`;
  return threadsBatch === threads ? base : `${base}, ${threadsBatch} for batches`;
}
