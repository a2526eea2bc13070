import type { LlamaContext } from "node-llama-cpp";

interface QueuedDecode {
  readonly sequenceId: number;
}

interface ContextInternals {
  _decodeTokens?: (...args: unknown[]) => Promise<unknown>;
  _queuedDecodes?: QueuedDecode[];
}

/**
 * Keeps the context's pending decodes ordered by sequence id, so that one decode step of N
 * sequences goes to llama.cpp as one N-token batch. node-llama-cpp queues them in arrival order,
 * and llama.cpp (whose per-sequence KV cache node-llama-cpp does not unify) splits a batch whose
 * sequences are out of order into several small physical batches. Measured with 8 streams on the
 * 60M test model: 296–325 → 407–429 tok/s on 1 thread (prebuilt), 449–490 → 710–767 on 2 threads
 * (local build). node-llama-cpp's batching options do not expose sequence ids, so this wraps its
 * queueing method; if a later version changes those internals, nothing is wrapped and batches
 * keep node-llama-cpp's own order.
 */
export function orderBatchesBySequence(context: LlamaContext): boolean {
  const internals = context as unknown as ContextInternals;
  const decode = internals._decodeTokens;
  if (typeof decode !== "function" || !Array.isArray(internals._queuedDecodes)) return false;
  internals._decodeTokens = function orderedDecode(this: ContextInternals, ...args: unknown[]) {
    const done = decode.apply(context, args);
    // The new decode was queued synchronously above; a stable sort keeps each sequence's own order.
    internals._queuedDecodes?.sort((a, b) => a.sequenceId - b.sequenceId);
    return done;
  };
  return true;
}
