// PRIORITY_BATCH requests in the sequence pool (proto: GenerateRequest.priority): the sequences
// they hold, in the order they took them, and which of them give way to an interactive request.
// docs/decisions.md, "Batch requests are preempted, no sequence is kept free".
import type { LlamaContextSequence } from "node-llama-cpp";

/** How the pool makes a batch request give way: it stops at its next decode step and frees its sequences. */
export interface BatchClaim {
  readonly preempt: () => void;
}

interface Hold {
  readonly claim: BatchClaim;
  readonly sequences: Set<LlamaContextSequence>;
  preempted: boolean;
}

/** The most batch requests that wait for a sequence (or for the embedding queue) per model. */
export const BATCH_QUEUE_LIMIT = 4096;

/** The batch requests holding sequences of one pool, oldest first. */
export class BatchHolds {
  readonly #holds: Hold[] = [];

  /** Batch requests holding sequences now. */
  get running(): number {
    return this.#holds.length;
  }

  /** Sequences batch requests hold now. */
  get sequences(): number {
    let held = 0;
    for (const hold of this.#holds) held += hold.sequences.size;
    return held;
  }

  /** A batch request took `sequences`. */
  add(claim: BatchClaim, sequences: readonly LlamaContextSequence[]): void {
    this.#holds.push({ claim, sequences: new Set(sequences), preempted: false });
  }

  /** A sequence is released: its batch request, if any, holds one fewer. */
  release(sequence: LlamaContextSequence): void {
    const at = this.#holds.findIndex((hold) => hold.sequences.has(sequence));
    const hold = this.#holds[at];
    if (hold === undefined) return;
    hold.sequences.delete(sequence);
    if (hold.sequences.size === 0) this.#holds.splice(at, 1);
  }

  /**
   * Preempts batch requests, the one that took its sequences last first, until the sequences that
   * preempted requests are about to free cover `needed` (what interactive requests wait for).
   */
  preemptFor(needed: number): void {
    let freeing = 0;
    for (const hold of this.#holds) if (hold.preempted) freeing += hold.sequences.size;
    for (let i = this.#holds.length - 1; i >= 0 && freeing < needed; i--) {
      const hold = this.#holds[i];
      if (hold === undefined || hold.preempted) continue;
      hold.preempted = true;
      freeing += hold.sequences.size;
      hold.claim.preempt();
    }
  }
}
