// How a context's decode steps reach llama.cpp: one batch per step of all streams, ordered by
// sequence, with turns for cache trims (`scheduleBatches`).
import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import type { Arrival, Arrivals } from "./arrivals.js";
import { isStep } from "./batch-shares.js";
import { decodeQueue, onBatchStart, sequenceIdOf, type QueuedDecode, wrapCellRemovals } from "./llama-internals.js";

/** Samples (or reads) the logits of one batch output; node-llama-cpp calls it after the decode. */
type LogitDataMapper = (batchLogitIndex: number, tokenIndex: number) => unknown;

/** How one context's decode steps reach llama.cpp. */
export interface BatchScheduler {
  /**
   * Runs `work` on `sequence` (a cache trim) between two decode steps: new steps of the other
   * sequences wait until it is done.
   */
  between<T>(sequence: LlamaContextSequence, work: () => Promise<T>): Promise<T>;
  /** A request on its way to its first decode (arrivals.ts): an idle context's first batch waits for it. */
  arrive(behind?: number): Arrival;
  /**
   * Point 5: every removal of `sequence`'s cells (node-llama-cpp's too) gets a turn `between` steps, unless it is made
   * in that sequence's own turn.
   */
  removalsInTurn(sequence: LlamaContextSequence): void;
}

/**
 * Five changes to how node-llama-cpp feeds llama.cpp, by wrapping the context's queueing method (its batching options
 * expose no sequence ids) and each sequence's cell removal:
 *
 * 1. Pending decodes stay ordered by sequence id, so one step of N sequences goes to llama.cpp as
 *    one N-token batch. In arrival order, llama.cpp (whose per-sequence KV cache node-llama-cpp
 *    does not unify) splits it into several small batches. Measured with 8 streams on the 60M
 *    test model: 296–325 → 407–429 tok/s on 1 thread (prebuilt), 449–490 → 710–767 on 2 threads
 *    (local build).
 * 2. The next batch waits until every sequence of the last one could queue its next step. The
 *    batch loop looks for queued steps as soon as all tokens of a batch are sampled, while the
 *    sequence sampled last has yet to go through its generation to queue its step; it went alone
 *    in a batch of its own, and stayed out of step: 8 streams decoded as a 7-sequence and a
 *    1-sequence batch per token. After each batch the loop now waits one event-loop turn (the
 *    batch's after-action), so every step of N streams is one N-sequence batch (tested). Measured
 *    through the edge with 8 streams: the same aggregate rate here (compute-bound on 1 thread),
 *    per-stream rates within 1.03× of the mean instead of 1.08–1.12×.
 * 3. A cache trim gets a turn. Trimming a sequence takes the context lock, which the batch
 *    dispatcher keeps while any decode is queued — so a request arriving while others generate
 *    waited until all of them had finished (measured: 1.2–1.8 s with 2–4 streams running). While
 *    a trim waits, other sequences queue no new step; the dispatcher finishes the step in flight
 *    and lets go of the lock, the trim runs, and the held steps go out together.
 * 4. The first sampling of a batch runs alone. llama.cpp may compute a batch's outputs in another
 *    order than the batch's (it splits a batch by sequence), and puts them back in order lazily, on
 *    the first read of the logits after the decode. node-llama-cpp samples the sequences of a batch
 *    at once on worker threads, so two samplings could run that reordering at the same time: the
 *    rows were then swapped twice or half, and a sequence sampled from another's logits (seen as a
 *    wrong reply about once in 3,000 requests under load, with prompts joining streams). The
 *    others start once the first has read the logits; by then the order is settled.
 * 5. node-llama-cpp's own cell removals get the same turn as a trim. A draft refuted after its step has its cells
 *    erased under the context lock, which the dispatcher keeps while the other streams queue their steps: the
 *    sequence stood still until every other reply had ended (seen on the 850M-class model at Q4_K_M with prompt
 *    lookup: four streams went two by two, 64 of 314 batches carrying all four). In a turn, the removal runs between
 *    two steps and the sequence's next step goes out with the others'.
 *
 * The queueing method and the queue are node-llama-cpp internals (`llama-internals.ts`, checked at
 * start-up).
 */
export function scheduleBatches(context: LlamaContext, arrivals: Arrivals): BatchScheduler {
  const decodes = decodeQueue(context);
  arrivals.streaming = () =>
    decodes.queued.some((decode) => isStep({ tokens: decode.tokens ?? [], logits: decode.logits ?? [] }));
  let gate: Promise<void> | undefined;
  let trimming: number | undefined;

  const queue = (args: unknown[]): Promise<unknown> => {
    const done = decodes.decodeTokens.apply(context, args);
    // The decode was queued synchronously above; a stable sort keeps each sequence's own order.
    decodes.queued.sort((a, b) => a.sequenceId - b.sequenceId);
    const decode = args[0] as QueuedDecode | undefined;
    if (decode !== undefined) arrivals.queued(decode.sequenceId);
    return done;
  };
  const turn = batchTurn();
  onBatchStart(context, turn.reset);
  const sampling = firstSamplingAlone();
  decodes.replace(async function scheduledDecode(...args: unknown[]): Promise<unknown> {
    const decode = args[0] as QueuedDecode | undefined;
    // The sequence being trimmed may decode (a trim can re-evaluate); the others wait their turn.
    while (gate !== undefined && decode?.sequenceId !== trimming) await gate;
    if (decode !== undefined) {
      const after = decode.afterBatchAction;
      const afterBatchAction = async (sequenceLength: number): Promise<void> => {
        sampling.batchDone();
        await after?.(sequenceLength);
        await turn.wait();
      };
      args[0] = { ...decode, afterBatchAction };
    }
    if (typeof args[1] === "function") args[1] = sampling.inTurn(args[1] as LogitDataMapper);
    return queue(args);
  });

  const scheduler: BatchScheduler = {
    arrive: (behind) => arrivals.arrive(behind),
    removalsInTurn(sequence) {
      const id = sequenceIdOf(sequence);
      wrapCellRemovals(sequence, (remove) => (trimming === id ? remove() : scheduler.between(sequence, remove)));
    },
    async between(sequence, work) {
      while (gate !== undefined) await gate;
      let open = (): void => undefined;
      gate = new Promise((resolve) => (open = resolve));
      trimming = sequenceIdOf(sequence);
      try {
        return await work();
      } finally {
        gate = undefined;
        trimming = undefined;
        open();
      }
    },
  };
  return scheduler;
}

/**
 * One event-loop turn after a batch, shared by the after-actions of all its sequences until the next batch starts.
 * node-llama-cpp runs those after-actions one after another, each awaited: a turn that ended when it fired gave a
 * batch of four sequences four turns (the readers' writes of every stream ran between them: 0.85 ms from the last
 * sequence's next step queued to the next batch, at a four-stream step of 40 ms on the 850M-class model at Q4_K_M).
 */
function batchTurn(): { wait(): Promise<void>; reset(): void } {
  let turn: Promise<void> | undefined;
  return {
    wait: () => (turn ??= new Promise((resolve) => setImmediate(resolve))),
    reset: () => {
      turn = undefined;
    },
  };
}

/** Point 4: the first sampling of each batch runs alone, the others after it. */
function firstSamplingAlone(): { inTurn(mapper: LogitDataMapper): LogitDataMapper; batchDone(): void } {
  let first: Promise<unknown> | undefined;
  return {
    inTurn:
      (mapper) =>
      (...mapped) => {
        if (first !== undefined)
          return first.then(
            () => mapper(...mapped),
            () => mapper(...mapped),
          );
        const result = mapper(...mapped);
        first = Promise.resolve(result);
        return result;
      },
    // Every sampling of a batch is done when its after-actions run.
    batchDone: () => (first = undefined),
  };
}
