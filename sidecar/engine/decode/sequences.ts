// A request's sequences: taken from the pool (a caller that leaves or is turned away counted), the
// cached prefix a prompt shares with one kept, and a long prompt fed in chunks.
import type { EvaluationPriority, LlamaContextSequence, Token } from "node-llama-cpp";
import type { EngineMetrics } from "../engine-metrics.js";
import { forgetCells, type LoadedModel } from "../llama/model.js";
import type { GenerationPlan } from "./generation-plan.js";
import type { Preemption } from "./preemption.js";
import { evalMediaIntoSequence } from "../llama/multimodal.js";
import type { MediaSpan } from "../chat/media-prompt.js";

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
  const taking = loaded.pool.acquire(plan.prompt.tokens, signal, clientId, preemption.claim);
  return counted(taking, signal, metrics).then((sequence) => {
    loaded.lora?.taken(sequence);
    return sequence;
  });
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
  const taking = loaded.pool.acquireMany(plan.prompt.tokens, signal, clientId, count, preemption.claim);
  return counted(taking, signal, metrics).then((sequences) => {
    for (const sequence of sequences) loaded.lora?.taken(sequence);
    return sequences;
  });
}

/**
 * Gives `sequence` back to the pool; an adapter's sequence whose scale changed while it was taken is emptied first
 * (its cells mix scales: lora.ts `stale`).
 */
export async function release(loaded: LoadedModel, sequence: LlamaContextSequence): Promise<void> {
  try {
    if (loaded.lora?.stale(sequence)) await forgetCells(loaded, sequence);
  } finally {
    loaded.pool.release(sequence);
  }
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
  const chunks = feedPromptInChunks(sequence, tokens, signal, evaluationPriority);
  for (let next = await chunks.next(); ; next = await chunks.next()) if (next.done === true) return next.value;
}

/**
 * `feedPrompt`, telling after each chunk how many of `tokens` are evaluated so far (the prompt's progress:
 * GenerateRequest.return_progress); returns the same tokens left. The next chunk's evaluation starts before the count
 * is handed out, so a reader slow to take it never holds the prompt back.
 */
export async function* feedPromptInChunks(
  sequence: LlamaContextSequence,
  tokens: Token[],
  signal: AbortSignal,
  evaluationPriority: EvaluationPriority,
): AsyncGenerator<number, Token[], undefined> {
  const chunkFrom = (start: number): Promise<void> | undefined =>
    tokens.length - start > PROMPT_CHUNK_TOKENS && !signal.aborted
      ? sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(start, start + PROMPT_CHUNK_TOKENS), {
          evaluationPriority,
        })
      : undefined;
  let start = 0;
  let evaluating = chunkFrom(start);
  try {
    while (evaluating !== undefined) {
      await evaluating;
      start += PROMPT_CHUNK_TOKENS;
      evaluating = chunkFrom(start);
      yield start;
    }
    return tokens.slice(start);
  } finally {
    // A reader that stops early (its caller left) still waits for the chunk in flight: the sequence is not given
    // back while it is evaluated.
    await evaluating?.catch(() => undefined);
  }
}

/**
 * Evaluates the prompt's tokens `from`..`to` (exclusive) into the sequence without generating: text in chunks (as
 * `feedPrompt`), each medium of `spans` by the model's projector. Returns where it stopped: `to`, or before when
 * `signal` aborts.
 */
export async function evaluatePromptRange(
  sequence: LlamaContextSequence,
  tokens: readonly Token[],
  spans: readonly MediaSpan[],
  range: { readonly from: number; readonly to: number },
  signal: AbortSignal,
  evaluationPriority: EvaluationPriority,
): Promise<number> {
  let at = range.from;
  const text = async (end: number): Promise<void> => {
    const rest = await feedPrompt(sequence, tokens.slice(at, end), signal, evaluationPriority);
    if (rest.length > 0 && !signal.aborted)
      await sequence.evaluateWithoutGeneratingNewTokens(rest, { evaluationPriority });
    if (!signal.aborted) at = end;
  };
  for (const span of spans) {
    const end = span.start + span.chunk.nPos;
    if (end <= at || span.start >= range.to) continue;
    await text(span.start);
    if (signal.aborted) return at;
    try {
      at = await evalMediaIntoSequence(sequence, span.chunk, span.placeholders, signal);
    } catch (error) {
      if (signal.aborted) return at;
      throw error;
    }
  }
  if (at < range.to) await text(range.to);
  return at;
}

/** Where the prompt's last medium ends (0 without media): evaluated before the prompt's rest is fed. */
export function mediaEnd(spans: readonly MediaSpan[]): number {
  return Math.max(0, ...spans.map((span) => span.start + span.chunk.nPos));
}

/**
 * Keeps the sequence's cached tokens that the prompt starts with, at most `limit` (at least the
 * prompt's last token is evaluated again: its logits pick the first reply token); returns how many. A prefix that
 * ends inside a medium ends before it: a medium is evaluated whole.
 */
export async function reuseCachedPrefix(
  loaded: LoadedModel,
  sequence: LlamaContextSequence,
  prompt: readonly Token[],
  limit: number,
  spans: readonly MediaSpan[] = [],
): Promise<number> {
  let shared = Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, limit);
  for (const span of spans) if (span.start < shared && shared < span.start + span.chunk.nPos) shared = span.start;
  if (sequence.nextTokenIndex > shared) {
    const end = sequence.nextTokenIndex;
    await loaded.scheduler.between(sequence, () => sequence.eraseContextTokenRanges([{ start: shared, end }]));
  }
  return shared;
}
