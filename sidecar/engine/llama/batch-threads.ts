// The threads of each decode batch: `--threads` for a batch of a few tokens, `--threads-batch` for
// larger ones, where "a few" depends on the model's size (`batchThreadsMinTokens`).
import type { LlamaContext } from "node-llama-cpp";
import { threadsPerBatch } from "./llama-internals.js";

/** The size of the 60M-parameter test model (random-60m.gguf), the yardstick of the work bounds measured on it. */
export const RANDOM_60M_BYTES = 120_749_664;

/** The most tokens a batch may need before it runs on the batch threads (a model as small as the 60M test model's). */
export const BATCH_THREADS_MAX_MIN_TOKENS = 8;

/**
 * The work (tokens × model bytes) from which a batch runs on the batch threads: 7.5 tokens of the
 * 60M-parameter test model (120.7 MB), where 2 threads beat 1 at 8 tokens and lost at 6 on the
 * project's 2-core machine (docs/decisions.md, "Threads per batch").
 */
const BATCH_THREADS_WORK_BYTES = 7.5 * RANDOM_60M_BYTES;

/**
 * The fewest tokens a batch of a model of `modelBytes` runs on the batch threads: 8 on a model as
 * small as the 60M test model, down to 2 from ~450 MB up (as llama.cpp itself does for every batch
 * of more than one token). A step of several streams of a larger model is enough work for every
 * thread: on the 850M-class model, 4 streams on 1 thread made half the tokens/s of 2.
 */
export function batchThreadsMinTokens(modelBytes: number): number {
  const tokens = Math.ceil(BATCH_THREADS_WORK_BYTES / Math.max(1, modelBytes));
  return Math.min(BATCH_THREADS_MAX_MIN_TOKENS, Math.max(2, tokens));
}

export interface ContextThreads {
  /** Threads for small batches: one stream's or a few streams' next tokens. */
  readonly decode: number;
  /** Threads for batches of `minTokens` tokens or more: prompts, many streams. */
  readonly batch: number;
  /** The fewest tokens a batch runs on the batch threads (`batchThreadsMinTokens`). */
  readonly minTokens: number;
}

/** Gives every batch of `context` its threads (the context is made with `threads.batch`). */
export function useBatchThreads(context: LlamaContext, threads: ContextThreads): void {
  if (threads.batch === threads.decode) return;
  threadsPerBatch(context, (tokens) => (tokens >= threads.minTokens ? threads.batch : threads.decode));
}
