// The in-process BatchQueue (the Node edge's): one loop per batch, each step right after the last,
// after a wait that doubles (0.5 s to 10 s) while the step only met lines to try later or failed.
// `stop` ends the loops and aborts the lines running; their lines stay pending for the next start.
import type { BatchQueue, Step, StepOutcome } from "../../state/batches/store.js";

const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 10_000;

export class InProcessQueue implements BatchQueue {
  private readonly active = new Set<string>();
  private readonly stopping = new AbortController();
  private step: ((id: string) => Promise<Step>) | undefined;
  private report: (error: unknown) => void = () => {};

  /** Aborted by `stop`: the runner's lines take it. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Starts serving with `step` (the runner's); a step that throws goes to `report`. */
  serve(step: (id: string) => Promise<Step>, report: (error: unknown) => void): void {
    this.step = step;
    this.report = report;
  }

  /** A loop for the batch unless one runs; its steps take no token (one loop per batch here). */
  send(batchId: string, options: { readonly delaySeconds?: number } = {}): Promise<void> {
    if (!this.active.has(batchId) && !this.stopping.signal.aborted) {
      this.active.add(batchId);
      void this.loop(batchId, (options.delaySeconds ?? 0) * 1000).finally(() => this.active.delete(batchId));
    }
    return Promise.resolve();
  }

  stop(): void {
    this.stopping.abort();
  }

  /** Waits `ms`, or less when the queue stops (no timer outlives it). */
  private pause(ms: number): Promise<void> {
    const signal = this.stopping.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  }

  private async loop(id: string, firstWaitMs: number): Promise<void> {
    let waitMs = firstWaitMs;
    for (;;) {
      if (waitMs > 0) await this.pause(waitMs);
      if (this.stopping.signal.aborted || this.step === undefined) return;
      let outcome: StepOutcome | "failed";
      try {
        outcome = (await this.step(id)).outcome;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        this.report(error);
        outcome = "failed";
      }
      if (outcome === "done") return;
      waitMs = outcome === "more" ? 0 : Math.min(Math.max(waitMs * 2, FIRST_WAIT_MS), LONGEST_WAIT_MS);
    }
  }
}
