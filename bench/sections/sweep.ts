// Concurrency sweep through the edge on Node; the peer runs the same streams at 1 and at
// `sequences` streams right after the edge, in the same loop.
import type { Party } from "../parties.js";
import { runConcurrent, type ConcurrentRun } from "./concurrent.js";

export interface SweepResult {
  readonly levels: readonly number[];
  readonly runsPerLevel: number;
  readonly edge: Record<string, ConcurrentRun[]>;
  readonly peer: Record<string, ConcurrentRun[]>;
}

/** Prompt variant of stream `i` in run `run` at `level`: unique, the same for edge and peer. */
export function sweepVariant(run: number, level: number, i: number): number {
  return 10_000 + run * 1_000 + level * 32 + i;
}

export async function runSweep(
  edge: Party,
  peer: Party | undefined,
  levels: readonly number[],
  peerLevels: readonly number[],
  runs: number,
  log: (m: string) => void,
  /** Runs are numbered from here (their prompts differ from those of runs numbered before). */
  firstRun = 0,
): Promise<SweepResult> {
  const result: SweepResult = { levels, runsPerLevel: runs, edge: {}, peer: {} };
  for (let run = firstRun; run < firstRun + runs; run++) {
    for (const level of levels) {
      const edgeRun = await runConcurrent(level, (i) => edge.run(sweepVariant(run, level, i)));
      const edgeRuns = result.edge[level] ?? [];
      result.edge[level] = edgeRuns;
      edgeRuns.push(edgeRun);
      let line = `sweep run ${run - firstRun + 1}/${runs}, ${level} streams: edge ${edgeRun.aggregateTps.toFixed(1)} tok/s`;
      if (peer !== undefined && peerLevels.includes(level)) {
        const peerRun = await runConcurrent(level, (i) => peer.run(sweepVariant(run, level, i)));
        const peerRuns = result.peer[level] ?? [];
        result.peer[level] = peerRuns;
        peerRuns.push(peerRun);
        line += `, llama-server ${peerRun.aggregateTps.toFixed(1)} tok/s`;
      }
      const odd = edgeRun.samples.filter((s) => s.outcome !== "completed");
      if (odd.length > 0) line += ` (${odd.map((s) => s.outcome).join(", ")})`;
      log(line);
    }
  }
  return result;
}
