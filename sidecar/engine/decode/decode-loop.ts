// The decode loop of one reply on its sequence: the prompt's rest fed, then sampling, stops and the
// reasoning budget token by token, and the finish made from what the loop saw.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { FinishReason, type GenerateResponseSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { GenerationPlan } from "./generation-plan.js";
import type { EngineMetrics } from "../engine-metrics.js";
import type { LoadedModel } from "../llama/model.js";
import type { ReplyParts } from "../syntax/reply-parser.js";
import { evaluatePromptRange, feedPromptInChunks, mediaEnd } from "./sequences.js";
import { StopSequenceFilter, type TextStep } from "./text-stream.js";
import { LineRuleGate } from "./line-rules.js";
import { evaluate, forcedStep, logOf, topAlternatives, type Step } from "./token-steps.js";
import { TokenTextDecoder } from "./token-text.js";

export type GenerateEvent = MessageInitShape<typeof GenerateResponseSchema>;

/** What the decode loop changes as it goes; the finish is made from it. */
export class DecodeState {
  readonly decoder: TokenTextDecoder;
  readonly filter: StopSequenceFilter;
  readonly promptStart = performance.now();
  firstTokenAt: number | undefined;
  reason: FinishReason = FinishReason.STOP;
  /** The request's stop sequence that ended the reply, if one did. */
  stopSequence = "";
  /** A stop text (the request's, the template's or the constraint's) ended the reply. */
  stoppedByText = false;
  /** Tokens of the reasoning segment, its markers included: what its budget counts. */
  reasoningTokens = 0;
  /** Those the model generated (not the end marker a spent budget forces): what the finish reports. */
  sampledReasoningTokens = 0;
  /** Whether the reasoning segment held any text (an empty one is no reasoning). */
  reasoned = false;
  /** A fill-in-the-middle line rule ended the reply (FINISH_REASON_LENGTH, as llama-server's "limit"). */
  endedByRule = false;
  /** The loop stopped because its signal was aborted, before the reply's end. */
  interrupted = false;
  /** Prompt tokens already in the sequence (cached, or scored) when the decode loop begins. */
  evaluated: number;
  /** Prompt tokens evaluated from the cached prefix's end to the last mark's end (proto: `cache_written_tokens`). */
  readonly cacheWrittenTokens: number;
  /** A fill-in-the-middle reply's line rules; undefined elsewhere. */
  readonly lines: LineRuleGate | undefined;
  /** Whether the prompt's evaluation is reported as it goes (GenerateRequest.return_progress). */
  progress = false;

  constructor(
    loaded: LoadedModel,
    plan: GenerationPlan,
    readonly queueMs: number,
    readonly cachedTokens: number,
  ) {
    this.decoder = new TokenTextDecoder(loaded.model);
    this.filter = new StopSequenceFilter(plan.stopTexts);
    this.evaluated = cachedTokens;
    this.cacheWrittenTokens = Math.max(0, ...plan.marks.map((mark) => mark.tokens - cachedTokens));
    const rules = plan.prompt.lineRules;
    this.lines =
      rules === undefined || (rules.minIndent === 0 && rules.timeLimitMs === 0)
        ? undefined
        : new LineRuleGate(rules, () => this.firstTokenAt);
  }
}

/** Evaluates the prompt, then samples and emits tokens until the reply ends. */
export async function* decode(
  loaded: LoadedModel,
  plan: GenerationPlan,
  state: DecodeState,
  sequence: LlamaContextSequence,
  signal: AbortSignal,
  metrics: EngineMetrics,
): AsyncGenerator<GenerateEvent, void> {
  if (plan.budget.tokens <= 0) {
    state.reason = plan.budget.reason;
    // max_tokens 0 on an infill (llama-server's n_predict 0): the prompt goes into the cache, for the edits after it.
    if (plan.prompt.lineRules !== undefined) await cachePrompt(plan, state, sequence, signal);
    return;
  }
  const spans = plan.prompt.media?.spans ?? [];
  const to = mediaEnd(spans);
  if (state.evaluated < to)
    state.evaluated = await evaluatePromptRange(
      sequence,
      plan.prompt.tokens,
      spans,
      { from: state.evaluated, to },
      signal,
      plan.evaluationPriority,
    );
  if (state.progress && to > 0) yield progressEvent(plan, state, state.evaluated);
  const rest = signal.aborted ? [] : yield* feedReported(plan, state, sequence, signal);
  if (signal.aborted) {
    state.interrupted = true;
    return;
  }
  const options = { greedy: plan.greedy, seeded: plan.seeded, streams: () => loaded.pool.busy };
  const drafting = plan.draftable ? loaded.drafter?.start(sequence, options) : undefined;
  const steps = evaluate(sequence, rest, plan.sampling, plan.logprobs, plan.topLogprobs > 0);
  try {
    let replacement: Token[] | undefined;
    for (let next = await steps.next(); next.done !== true; next = await steps.next(replacement)) {
      if (signal.aborted) {
        state.interrupted = true;
        return;
      }
      if (state.firstTokenAt === undefined) {
        state.firstTokenAt = performance.now();
        // The whole prompt is in the sequence: the last progress event, before the first token's.
        if (state.progress) yield progressEvent(plan, state, plan.prompt.tokens.length);
      }
      // A spent reasoning budget: the segment's end goes into the reply in place of the sampled
      // token, and the model goes on from there.
      replacement = reasoningSpent(plan, state) ? plan.reasoning?.tokens : undefined;
      for (const step of replacement?.map(forcedStep) ?? [next.value]) {
        const taken = take(loaded, plan, state, step, metrics);
        if (taken.event !== undefined) yield taken.event;
        if (taken.ended) return;
      }
    }
  } finally {
    await steps.return(undefined);
    // Drafts checked but not taken leave the sequence's cells as the prefix cache reads them.
    await drafting?.end((work) => loaded.scheduler.between(sequence, work));
  }
}

/**
 * Feeds the prompt's text after what is evaluated, in chunks; with `state.progress` a progress event after each
 * chunk. Returns the tokens left for the generating evaluation.
 */
async function* feedReported(
  plan: GenerationPlan,
  state: DecodeState,
  sequence: LlamaContextSequence,
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent, Token[]> {
  const from = state.evaluated;
  const chunks = feedPromptInChunks(sequence, plan.prompt.tokens.slice(from), signal, plan.evaluationPriority);
  for (let next = await chunks.next(); ; next = await chunks.next()) {
    if (next.done === true) return next.value;
    if (state.progress) yield progressEvent(plan, state, from + next.value);
  }
}

/** How far the prompt's evaluation is: `processed` of its tokens in the sequence (GenerateResponse.progress). */
function progressEvent(plan: GenerationPlan, state: DecodeState, processed: number): GenerateEvent {
  const total = plan.prompt.tokens.length;
  const timeMs = performance.now() - state.promptStart;
  return { event: { case: "progress", value: { total, cache: state.cachedTokens, processed, timeMs } } };
}

/** Evaluates the whole prompt and generates nothing. */
async function cachePrompt(
  plan: GenerationPlan,
  state: DecodeState,
  sequence: LlamaContextSequence,
  signal: AbortSignal,
): Promise<void> {
  const { tokens } = plan.prompt;
  const range = { from: state.evaluated, to: tokens.length };
  await evaluatePromptRange(sequence, tokens, plan.prompt.media?.spans ?? [], range, signal, plan.evaluationPriority);
}

function reasoningSpent(plan: GenerationPlan, state: DecodeState): boolean {
  return (
    plan.reasoning !== undefined && plan.parser?.phase === "reasoning" && state.reasoningTokens >= plan.reasoning.budget
  );
}

/** Adds one token to the reply: its event (none for a stop token), and whether the reply ends with it. */
function take(
  loaded: LoadedModel,
  plan: GenerationPlan,
  state: DecodeState,
  step: Step,
  metrics: EngineMetrics,
): { event?: GenerateEvent; ended: boolean } {
  if (plan.prompt.stopTokens.has(step.token)) return { ended: true };
  plan.generated.push(step.token);
  metrics.tokensGenerated++;
  const raw = state.decoder.push(step.token);
  const parser = plan.parser;
  // Stop sequences apply outside tool calls: argument JSON is never cut.
  const filtered: TextStep = parser?.inCall === true ? { text: state.filter.flush() + raw } : state.filter.push(raw);
  const text = lineRules(state, filtered);
  const phaseBefore = parser?.phase;
  const parts = parser?.push(text.text);
  // A token that opens, continues or closes a reasoning segment is a reasoning token.
  if (phaseBefore === "reasoning" || parser?.phase === "reasoning") {
    state.reasoningTokens++;
    if (step.forced !== true) state.sampledReasoningTokens++;
  }
  if (parts !== undefined && parts.reasoning !== "") state.reasoned = true;
  return { event: tokenEvent(loaded, plan, step, text.text, parts), ended: ended(plan, state, text.stop) };
}

/** The text after a fill-in-the-middle reply's line rules: a rule that ends the reply ends it as its length would. */
function lineRules(state: DecodeState, step: TextStep): TextStep {
  if (state.lines === undefined || step.stop !== undefined) return step;
  const line = state.lines.push(step.text);
  if (!line.ended) return step;
  state.endedByRule = true;
  return { text: line.text };
}

function tokenEvent(
  loaded: LoadedModel,
  plan: GenerationPlan,
  step: Step,
  text: string,
  parts: ReplyParts | undefined,
): GenerateEvent {
  return {
    event: {
      case: "token",
      value: {
        id: step.token,
        text: parts === undefined ? text : parts.content,
        piece: loaded.tokenBytes.of(step.token),
        ...(plan.logprobs ? { logprob: logOf(step.probability) } : {}),
        topLogprobs: topAlternatives(loaded, step.alternatives, plan.topLogprobs),
        ...(parts !== undefined ? { reasoning: parts.reasoning, toolCalls: parts.calls } : {}),
      },
    },
  };
}

/** Whether the reply ends after its last token (`stop`: the stop text that token completed). */
function ended(plan: GenerationPlan, state: DecodeState, stop: string | undefined): boolean {
  if (stop !== undefined) {
    state.stoppedByText = true;
    if (plan.userStops.has(stop)) state.stopSequence = stop;
    return true;
  }
  if (state.endedByRule) {
    state.reason = FinishReason.LENGTH;
    return true;
  }
  // A reply limited to one call ends when it is complete.
  if (plan.oneCall && (plan.parser?.completedCalls ?? 0) > 0) return true;
  if (plan.generated.length >= plan.budget.tokens) {
    state.reason = plan.budget.reason;
    return true;
  }
  return false;
}

/**
 * The finish event: the held-back text, the reason, the counts and the timings. `record`: the
 * metrics count it (a request's other choices are not counted again).
 */
export function finish(
  plan: GenerationPlan,
  state: DecodeState,
  signal: AbortSignal,
  metrics: EngineMetrics,
  record = true,
): GenerateEvent {
  if (signal.aborted) {
    state.reason = FinishReason.ABORT;
    if (record) metrics.generationsAborted++;
  }
  const tail = closingText(plan, state);
  const end = performance.now();
  const timings = {
    queueMs: state.queueMs,
    promptMs: (state.firstTokenAt ?? end) - state.promptStart,
    generationMs: state.firstTokenAt === undefined ? 0 : end - state.firstTokenAt,
  };
  const promptTokens = plan.prompt.tokens.length;
  const completionTokens = plan.generated.length;
  if (record && state.reason !== FinishReason.ABORT) metrics.finished({ ...timings, promptTokens, completionTokens });
  const { reason, stopSequence, cachedTokens, cacheWrittenTokens } = state;
  const { text, reasoning } = tail;
  // Forced markers and an empty segment are no reasoning (docs/contract.md, "Reasoning effort").
  const reasoningTokens = state.reasoned || reasoning !== "" ? state.sampledReasoningTokens : 0;
  return {
    event: {
      case: "finish",
      value: {
        reason,
        promptTokens,
        completionTokens,
        cachedTokens,
        cacheWrittenTokens,
        stopSequence,
        text,
        reasoning,
        reasoningTokens,
        timings,
      },
    },
  };
}

/** Text held back until the end; a normal end with complete calls becomes TOOL_CALLS. */
function closingText(plan: GenerationPlan, state: DecodeState): { text: string; reasoning: string } {
  let text = "";
  if (!state.stoppedByText && !state.endedByRule && state.reason !== FinishReason.ABORT) {
    const last = state.filter.push(state.decoder.flush());
    text = last.text + (last.stop === undefined ? state.filter.flush() : "");
    if (plan.trimEnd) text = text.trimEnd();
    if (last.stop !== undefined && plan.userStops.has(last.stop)) state.stopSequence = last.stop;
  }
  const parser = plan.parser;
  if (parser === undefined) return { text, reasoning: "" };
  // Whatever completes a call at the very end has no token to travel with: the call stays incomplete.
  const parts = parser.push(text);
  const held = parser.flush();
  if (state.reason === FinishReason.STOP && parser.completedCalls > 0) state.reason = FinishReason.TOOL_CALLS;
  return { text: parts.content + held.content, reasoning: parts.reasoning + held.reasoning };
}
