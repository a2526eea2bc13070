// Single stream: every party runs the same prompts one at a time, interleaved (round r runs each
// party once, in an order rotated by r) so machine noise hits them alike.
import { CpuMeter } from "../cpu.js";
import type { Party, PartyKey } from "../parties.js";
import type { StreamSample } from "../sample.js";

export interface SingleResult {
  readonly runs: number;
  readonly parties: {
    readonly key: PartyKey;
    readonly label: string;
    readonly samples: StreamSample[];
    /** CPU ms used per process role over all measured runs of this party. */
    readonly cpuMs: Record<string, number>;
  }[];
}

/**
 * Prompt variants of the single-stream runs (the sweep uses others): one per party and round, so
 * no party finds the prompt another party just sent in a shared KV cache (b, c and d share the
 * sidecar). Three digits each, so every prompt has the same number of tokens.
 */
const VARIANT_BASE = 100;
const WARM_UP_BASE = 900;

export async function runSingle(
  parties: readonly Party[],
  runs: number,
  meter: CpuMeter,
  log: (m: string) => void,
): Promise<SingleResult> {
  const result: SingleResult = {
    runs,
    parties: parties.map((p) => ({ key: p.key, label: p.label, samples: [], cpuMs: {} })),
  };
  // One discarded warm-up each: first-call costs (JIT, connections, buffers) are not the steady state.
  for (const [index, party] of parties.entries()) await party.run(WARM_UP_BASE + index);
  for (let round = 0; round < runs; round++) {
    const order = parties.map((_, i) => (i + round) % parties.length);
    for (const index of order) {
      const party = parties[index];
      const into = result.parties[index];
      if (party === undefined || into === undefined) continue;
      const before = meter.snapshot();
      const sample = await party.run(VARIANT_BASE + round * parties.length + index);
      for (const [role, ms] of Object.entries(CpuMeter.diff(before, meter.snapshot())))
        into.cpuMs[role] = (into.cpuMs[role] ?? 0) + ms;
      into.samples.push(sample);
      if (sample.outcome !== "completed") log(`single ${party.key}: ${sample.outcome} ${sample.error ?? ""}`);
    }
    log(`single-stream round ${round + 1}/${runs} done`);
  }
  return result;
}
