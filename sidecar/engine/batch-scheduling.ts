import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";

interface QueuedDecode {
  readonly sequenceId: number;
}

interface ContextInternals {
  _decodeTokens?: (...args: unknown[]) => Promise<unknown>;
  _queuedDecodes?: QueuedDecode[];
}

/** How one context's decode steps reach llama.cpp. */
export interface BatchScheduler {
  /** Whether the scheduling below is in effect (false if node-llama-cpp's internals changed). */
  readonly active: boolean;
  /**
   * Runs `work` on `sequence` (a cache trim) between two decode steps: new steps of the other
   * sequences wait until it is done.
   */
  between<T>(sequence: LlamaContextSequence, work: () => Promise<T>): Promise<T>;
}

/**
 * Two changes to how node-llama-cpp feeds llama.cpp, both by wrapping the context's queueing
 * method (its batching options expose no sequence ids):
 *
 * 1. Pending decodes stay ordered by sequence id, so one step of N sequences goes to llama.cpp as
 *    one N-token batch. In arrival order, llama.cpp (whose per-sequence KV cache node-llama-cpp
 *    does not unify) splits it into several small batches. Measured with 8 streams on the 60M
 *    test model: 296–325 → 407–429 tok/s on 1 thread (prebuilt), 449–490 → 710–767 on 2 threads
 *    (local build).
 * 2. A cache trim gets a turn. Trimming a sequence takes the context lock, which the batch
 *    dispatcher keeps while any decode is queued — so a request arriving while others generate
 *    waited until all of them had finished (measured: 1.2–1.8 s with 2–4 streams running). While
 *    a trim waits, other sequences queue no new step; the dispatcher finishes the step in flight
 *    and lets go of the lock, the trim runs, and the held steps go out together.
 *
 * If a later node-llama-cpp changes those internals, nothing is wrapped and both fall back to
 * node-llama-cpp's own behaviour (`active` is false; a test checks it).
 */
export function scheduleBatches(context: LlamaContext): BatchScheduler {
  const internals = context as unknown as ContextInternals;
  const decode = internals._decodeTokens;
  if (typeof decode !== "function" || !Array.isArray(internals._queuedDecodes)) {
    return { active: false, between: (_sequence, work) => work() };
  }
  let gate: Promise<void> | undefined;
  let trimming: number | undefined;

  const queue = (args: unknown[]): Promise<unknown> => {
    const done = decode.apply(context, args);
    // The decode was queued synchronously above; a stable sort keeps each sequence's own order.
    internals._queuedDecodes?.sort((a, b) => a.sequenceId - b.sequenceId);
    return done;
  };
  internals._decodeTokens = async function scheduledDecode(...args: unknown[]): Promise<unknown> {
    const sequenceId = (args[0] as Partial<QueuedDecode> | undefined)?.sequenceId;
    // The sequence being trimmed may decode (a trim can re-evaluate); the others wait their turn.
    while (gate !== undefined && sequenceId !== trimming) await gate;
    return queue(args);
  };

  return {
    active: true,
    async between(sequence, work) {
      while (gate !== undefined) await gate;
      let open = (): void => undefined;
      gate = new Promise((resolve) => (open = resolve));
      trimming = (sequence as unknown as { _sequenceId?: number })._sequenceId;
      try {
        return await work();
      } finally {
        gate = undefined;
        trimming = undefined;
        open();
      }
    },
  };
}
