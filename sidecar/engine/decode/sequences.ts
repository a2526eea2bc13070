// A request's sequences: taken from the pool (a caller that leaves or is turned away counted), the
// cached prefix a prompt shares with one kept, and a long prompt fed in chunks.
import type { EvaluationPriority, LlamaContextSequence, Token } from "node-llama-cpp";
import type { EngineMetrics } from "../engine-metrics.js";
import type { LoadedModel } from "../llama/model.js";
import type { GenerationPlan } from "./generation-plan.js";
import type { Preemption } from "./preemption.js";

/**
 * Waits for a free sequence (a batch request behind every interactive one), counting a caller that leaves or is turned
 * away.
 */
export function acquire(
  loaded: LoadedModel,
  plan: GenerationPlan,
  clientId: string,
  preemption: Preemption,
  metrics: EngineMetrics,
): Promise<LlamaContextSequence> {
  const signal = preemption.signal;
  return counted(loaded.pool.acquire(plan.prompt.tokens, signal, clientId, preemption.claim), signal, metrics);
}

/** Waits until `count` sequences are free and takes them all (GenerateRequest.n), counted as `acquire` counts. */
export function acquireMany(
  loaded: LoadedModel,
  plan: GenerationPlan,
  clientId: string,
  preemption: Preemption,
  metrics: EngineMetrics,
  count: number,
): Promise<LlamaContextSequence[]> {
  const signal = preemption.signal;
  return counted(
    loaded.pool.acquireMany(plan.prompt.tokens, signal, clientId, count, preemption.claim),
    signal,
    metrics,
  );
}

async function counted<T>(taking: Promise<T>, signal: AbortSignal, metrics: EngineMetrics): Promise<T> {
  try {
    return await taking;
  } catch (error) {
    if (signal.aborted) metrics.requestsCancelledInQueue++;
    else metrics.requestsRejected++;
    throw error;
  }
}

/** Prompt tokens evaluated per call, between two looks at the caller's signal. */
export const PROMPT_CHUNK_TOKENS = 512;

/**
 * Evaluates a long prompt's tokens in chunks, looking at `signal` between chunks, so a caller that
 * leaves during prompt processing frees its sequence within a chunk (as llama-server stops between
 * batches) instead of after the whole prompt. Returns the tokens left for the generating
 * evaluation: the last chunk (at least the last token, whose logits pick the first reply token).
 * A short prompt is returned whole, untouched.
 */
export async function feedPrompt(
  sequence: LlamaContextSequence,
  tokens: Token[],
  signal: AbortSignal,
  evaluationPriority: EvaluationPriority,
): Promise<Token[]> {
  let start = 0;
  while (tokens.length - start > PROMPT_CHUNK_TOKENS && !signal.aborted) {
    await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(start, start + PROMPT_CHUNK_TOKENS), {
      evaluationPriority,
    });
    start += PROMPT_CHUNK_TOKENS;
  }
  return tokens.slice(start);
}

/**
 * Keeps the sequence's cached tokens that the prompt starts with, at most `limit` (at least the
 * prompt's last token is evaluated again: its logits pick the first reply token); returns how many.
 */
export async function reuseCachedPrefix(
  loaded: LoadedModel,
  sequence: LlamaContextSequence,
  prompt: readonly Token[],
  limit: number,
): Promise<number> {
  const shared = Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, limit);
  if (sequence.nextTokenIndex > shared) {
    const end = sequence.nextTokenIndex;
    await loaded.scheduler.between(sequence, () => sequence.eraseContextTokenRanges([{ start: shared, end }]));
  }
  return shared;
}
