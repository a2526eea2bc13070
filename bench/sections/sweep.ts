// Concurrency sweep through the edge on Node; each peer (llama-server build) runs the same streams
// at its levels (1, 4 and `sequences` streams) right after the edge, in the same loop.
import type { Party } from "../parties.js";
import { runConcurrent, type ConcurrentRun } from "./concurrent.js";

export interface SweepResult {
  readonly levels: readonly number[];
  readonly runsPerLevel: number;
  readonly edge: Record<string, ConcurrentRun[]>;
  /** Each peer's runs by level, in the order of the peers given. */
  readonly peers: { readonly label: string; readonly runs: Record<string, ConcurrentRun[]> }[];
}

/** Prompt variant of stream `i` in run `run` at `level`: unique, the same for edge and peer. */
export function sweepVariant(run: number, level: number, i: number): number {
  return 10_000 + run * 1_000 + level * 32 + i;
}

export async function runSweep(
  edge: Party,
  peers: readonly Party[],
  levels: readonly number[],
  peerLevels: readonly number[],
  runs: number,
  log: (m: string) => void,
  /** Runs are numbered from here (their prompts differ from those of runs numbered before). */
  firstRun = 0,
): Promise<SweepResult> {
  const result: SweepResult = {
    levels,
    runsPerLevel: runs,
    edge: {},
    peers: peers.map((p) => ({ label: p.label, runs: {} })),
  };
  for (let run = firstRun; run < firstRun + runs; run++) {
    for (const level of levels) {
      const edgeRun = await runConcurrent(level, (i) => edge.run(sweepVariant(run, level, i)));
      const edgeRuns = result.edge[level] ?? [];
      result.edge[level] = edgeRuns;
      edgeRuns.push(edgeRun);
      let line =
        `sweep run ${run - firstRun + 1}/${runs}, ${level} streams: edge ${edgeRun.aggregateTps.toFixed(1)} ` + `tok/s`;
      for (const [index, peer] of peers.entries()) {
        const into = result.peers[index];
        if (!peerLevels.includes(level) || into === undefined) continue;
        const peerRun = await runConcurrent(level, (i) => peer.run(sweepVariant(run, level, i)));
        const peerRuns = into.runs[level] ?? [];
        into.runs[level] = peerRuns;
        peerRuns.push(peerRun);
        line += `, ${peer.label} ${peerRun.aggregateTps.toFixed(1)} tok/s`;
      }
      const odd = edgeRun.samples.filter((s) => s.outcome !== "completed");
      if (odd.length > 0) line += ` (${odd.map((s) => s.outcome).join(", ")})`;
      log(line);
    }
  }
  return result;
}
