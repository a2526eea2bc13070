// A generation's side of its priority (proto: GenerateRequest.priority): a PRIORITY_BATCH request
// runs on a signal the pool may abort to preempt it (../llama/idle-capacity.ts), and ends with the
// preemption status when that stopped it. docs/contract.md, "Priority".
import { Priority } from "../../../proto/gen/inference/v1/inference_pb.js";
import { preempted } from "../engine-errors.js";
import type { BatchClaim } from "../llama/idle-capacity.js";
import type { EngineMetrics } from "../engine-metrics.js";

export class Preemption {
  readonly #preempted = new AbortController();
  /** The caller's own signal (a finish reports ABORT when it is aborted). */
  readonly caller: AbortSignal;
  #reported = false;
  /** The signal the generation runs on: its caller's, and for a batch request its preemption too. */
  readonly signal: AbortSignal;
  /** What the pool holds of a batch request; undefined for an interactive one. */
  readonly claim: BatchClaim | undefined;

  constructor(priority: Priority, caller: AbortSignal) {
    this.caller = caller;
    const batch = priority === Priority.BATCH;
    this.signal = batch ? AbortSignal.any([caller, this.#preempted.signal]) : caller;
    this.claim = batch ? { preempt: () => this.#preempted.abort() } : undefined;
  }

  /** Whether the request was preempted (its caller still there). */
  get preempted(): boolean {
    return this.#preempted.signal.aborted && !this.caller.aborted;
  }

  /**
   * Ends a preempted request whose decode loop it stopped (`interrupted`: DecodeState's): ABORTED
   * with a Preempted detail (a reply that reached its end first is delivered as it is).
   */
  check(interrupted: boolean, generatedTokens: number, metrics: EngineMetrics): void {
    if (!this.preempted || !interrupted) return;
    // Counted once: a request's every choice stops.
    if (!this.#reported) metrics.generationsPreempted++;
    this.#reported = true;
    throw preempted(generatedTokens);
  }
}
