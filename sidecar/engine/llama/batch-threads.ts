// The threads of each decode batch: `--threads` for a batch of a few tokens, `--threads-batch` for
// `BATCH_THREADS_MIN_TOKENS` or more.
import type { LlamaContext } from "node-llama-cpp";
import { threadsPerBatch } from "./llama-internals.js";

/**
 * Batches of at least this many tokens run on the batch threads, smaller ones on the decode
 * threads. On the project's 2-core machine (docs/decisions.md, "Threads per batch"), 2 threads
 * beat 1 for 8-token batches and prompts and lose to it for batches of 1–6 tokens.
 */
export const BATCH_THREADS_MIN_TOKENS = 8;

export interface ContextThreads {
  /** Threads for small batches: one stream's or a few streams' next tokens. */
  readonly decode: number;
  /** Threads for batches of `BATCH_THREADS_MIN_TOKENS` tokens or more: prompts, many streams. */
  readonly batch: number;
}

/** The threads a batch of `tokens` tokens runs on. */
function threadsForBatch(threads: ContextThreads, tokens: number): number {
  return tokens >= BATCH_THREADS_MIN_TOKENS ? threads.batch : threads.decode;
}

/** Gives every batch of `context` its threads (the context is made with `threads.batch`). */
export function useBatchThreads(context: LlamaContext, threads: ContextThreads): void {
  if (threads.batch === threads.decode) return;
  threadsPerBatch(context, (tokens) => threadsForBatch(threads, tokens));
}
