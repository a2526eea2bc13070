// Memory before and after the load: after a load run, the sidecar and the edge must return to
// their idle footprint. Each Node child reports its own footprint (`memory` command, ipc.ts),
// after a full garbage collection when asked.
import type { Child } from "./children.js";
import type { Footprint } from "./ipc.js";

export type { Footprint };

export interface MemoryRow {
  readonly name: string;
  /** After start-up and one warm-up request, after a GC. */
  readonly idle: Footprint;
  /** Right after the last stream of the load ended. */
  readonly loaded: Footprint;
  /** A while after the load, after a GC. */
  readonly settled: Footprint;
  /** Settled again after a second, shorter load of the same kinds with new prompts. */
  readonly again: Footprint | undefined;
}

/** How long the processes rest after the load before the settled reading. */
export const SETTLE_MS = 2_000;

/** "The same footprint": within this share (plus 4 MiB) of the reading compared with. */
export const TOLERANCE = 0.1;

export function footprint(child: Child<unknown>, gc: boolean): Promise<Footprint> {
  return child.call<Footprint>("memory", { gc });
}

const within = (value: number, base: number): boolean => value <= base * (1 + TOLERANCE) + 4;

/**
 * Memory is bounded when the JS heap is back at its idle size once the load is over (nothing of
 * the finished requests is kept), and a second load leaves the resident set where the first left
 * it. The resident set itself does not go back to idle: it keeps the pages of llama.cpp's KV cache
 * (allocated at start for every sequence, resident once written) and the pages V8 and malloc keep
 * for reuse.
 */
export function bounded(row: MemoryRow): boolean {
  return (
    within(row.settled.heapUsedMiB, row.idle.heapUsedMiB) &&
    row.again !== undefined &&
    within(row.again.rssMiB, row.settled.rssMiB)
  );
}
