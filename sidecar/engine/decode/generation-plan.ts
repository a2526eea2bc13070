// A request's generation plan: prompt tokens, stops, sampling, constraint or reply reader, token
// and reasoning budgets, built and checked before the request waits for a sequence.
import type { EvaluationPriority, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import {
  FinishReason,
  type GenerateRequest,
  Priority,
  type SamplingOptions,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { BATCH_EVALUATION_PRIORITY, INTERACTIVE_EVALUATION_PRIORITY } from "../llama/batch-shares.js";
import { constraintState } from "../grammar/constraint.js";
import { invalidArgument, promptTooLong } from "../engine-errors.js";
import type { LoadedModel } from "../llama/model.js";
import { renderPrompt, type RenderedPrompt } from "../chat/prompt.js";
import { prepareMedia } from "../chat/media-prompt.js";
import { checkCacheMarks, markPositions } from "../chat/cache-marks.js";
import type { MarkRequest } from "../llama/kv-marks.js";
import type { ReplyParser } from "../syntax/reply-parser.js";
import { replyReader } from "../chat/reply-reader.js";
import { templateMarkerTokens } from "../llama/marker-tokens.js";
import { buildSampling, checkLogprobs, checkStops, tokenBiasOf } from "./sampling.js";

/** How a reply that spends its reasoning budget leaves the reasoning segment. */
export interface ReasoningClose {
  /** Reasoning tokens the reply may spend. */
  readonly budget: number;
  /** The reasoning segment's end marker, as the template writes it. */
  readonly tokens: Token[];
}

/** The most tokens a reply may have, and the finish reason when it has them. */
export interface TokenBudget {
  readonly tokens: number;
  readonly reason: FinishReason;
}

/**
 * Everything one generation needs, built from the request and fully checked before it waits for a
 * sequence: whatever a plan can be refused for is refused while building it.
 */
export interface GenerationPlan {
  readonly prompt: RenderedPrompt;
  /** Texts that end the reply: the request's, the template's, the constraint's. */
  readonly stopTexts: readonly string[];
  /** The request's own stop sequences (the only ones a finish names). */
  readonly userStops: ReadonlySet<string>;
  /** The priority of its tokens in a batch: a batch request's give way (../llama/batch-shares.ts). */
  readonly evaluationPriority: EvaluationPriority;
  /** node-llama-cpp's sampling options (grammar and token bias included). */
  readonly sampling: SequenceEvaluateOptions;
  /** The reply's tokens so far: the decode loop appends them, the sampler's penalties read them. */
  readonly generated: Token[];
  /** Whether whitespace at the end of the reply is dropped (JSON constraints). */
  readonly trimEnd: boolean;
  /** Splits a chat reply into reasoning, content and calls; undefined for plain text. */
  readonly parser: ReplyParser | undefined;
  /** The reply ends after its first complete call. */
  readonly oneCall: boolean;
  readonly budget: TokenBudget;
  readonly reasoning: ReasoningClose | undefined;
  /** Report each token's log-probability. */
  readonly logprobs: boolean;
  /** Alternatives reported per token. */
  readonly topLogprobs: number;
  /** Score the prompt's own tokens (`start.prompt`); the whole prompt is evaluated. */
  readonly promptLogprobs: boolean;
  /** The request's cache marks placed in the prompt (chat/cache-marks.ts); none without marks. */
  readonly marks: readonly MarkRequest[];
  /**
   * Drafts may be checked beside its steps (../llama/prompt-lookup.ts): its sampling reads nothing
   * that changes with the reply (penalties, a grammar or a bias the reply reader moves along).
   */
  readonly draftable: boolean;
  /** Sampled at temperature 0: prompt lookup may draft from the model's last replies (../llama/reply-pool.ts). */
  readonly greedy: boolean;
  /**
   * Sampled above temperature 0 with the caller's seed: its sampler draws once a drafted position, so its drafts may
   * depend on its own tokens alone (not on timed steps or other streams) for the reply to repeat.
   */
  readonly seeded: boolean;
}

/** Checks `request` and builds its plan; throws the refusal (INVALID_ARGUMENT) otherwise. */
export async function planGeneration(loaded: LoadedModel, request: GenerateRequest): Promise<GenerationPlan> {
  checkStops(request.stop);
  checkLogprobs(request.topLogprobs);
  checkCacheMarks(request.cacheMarks);
  const media = request.input.case === "chat" ? await prepareMedia(loaded, request.input.value) : undefined;
  const prompt = renderPrompt(loaded, request.input, media);
  try {
    if (prompt.tokens.length === 0) throw invalidArgument("the prompt is empty");
    if (prompt.tokens.length >= loaded.contextSize) throw promptTooLong(prompt.tokens.length, loaded.contextSize);
    if (prompt.media !== undefined && request.promptLogprobs)
      throw invalidArgument("the prompt's log-probabilities cannot be scored over media: drop one of them");
    return await planReply(loaded, request, prompt, 0, undefined);
  } catch (error) {
    prompt.media?.dispose();
    throw error;
  }
}

/**
 * The plan of choice `choice` (1..n-1; GenerateRequest.n) of a request whose first choice is
 * planned: the same prompt and marks, and a reply of its own — sampler (seed + choice), constraint
 * state, reply reader, token list.
 */
export function planChoice(
  loaded: LoadedModel,
  request: GenerateRequest,
  first: GenerationPlan,
  choice: number,
): Promise<GenerationPlan> {
  return planReply(loaded, request, first.prompt, choice, first.marks);
}

/** A plan for the rendered `prompt`; `marks` when they are placed already. */
async function planReply(
  loaded: LoadedModel,
  request: GenerateRequest,
  prompt: RenderedPrompt,
  choice: number,
  marks: readonly MarkRequest[] | undefined,
): Promise<GenerationPlan> {
  const generated: Token[] = [];
  const sampling = buildSampling(
    loaded,
    choice === 0 ? request.sampling : seededFor(request.sampling, choice),
    generated,
  );
  // A batch request's tokens give way to interactive ones in each batch (batch-shares.ts).
  const evaluationPriority =
    request.priority === Priority.BATCH ? BATCH_EVALUATION_PRIORITY : INTERACTIVE_EVALUATION_PRIORITY;
  sampling.evaluationPriority = evaluationPriority;
  const constraint = await constraintState(loaded, request.constraint);
  if (constraint !== undefined && prompt.toolUse !== undefined) {
    throw invalidArgument(
      "an output constraint (JSON or grammar) cannot be combined with tools the model may call; drop one, or set the " +
        "tool choice to none",
    );
  }
  if (constraint !== undefined) sampling.grammarEvaluationState = constraint.state;
  const reply = await replyReader(loaded, prompt);
  if (reply?.grammar !== undefined) {
    const grammar = reply.grammar;
    sampling.grammarEvaluationState = () => grammar.current();
    // Markers are banned only where arguments are JSON: tagged arguments are written with them.
    if (loaded.replySyntax.calls?.arguments.kind === "json")
      argumentsWithoutMarkers(loaded, request, sampling, reply.parser);
  }
  return {
    prompt,
    evaluationPriority,
    stopTexts: [...request.stop, ...prompt.stopTexts, ...(constraint?.stopTexts ?? [])],
    userStops: new Set(request.stop),
    sampling,
    generated,
    trimEnd: constraint?.trimWhitespaceSuffix === true,
    parser: reply?.parser,
    oneCall: reply !== undefined && prompt.toolUse?.parallel === false,
    budget: tokenBudget(request.maxTokens, loaded.contextSize - prompt.tokens.length),
    reasoning: reasoningClose(loaded, request),
    logprobs: request.logprobs || request.topLogprobs > 0,
    topLogprobs: request.topLogprobs,
    promptLogprobs: request.promptLogprobs,
    marks: marks ?? markPositions(loaded, request, prompt.tokens),
    // A draft reads the prompt's tokens, which hold media placeholders no model can evaluate.
    draftable: prompt.media === undefined && draftable(sampling),
    greedy: sampling.temperature === 0,
    seeded: sampling.temperature !== 0 && request.sampling?.seed !== undefined,
  };
}

/**
 * Whether every position of a draft samples with the options its first one does: node-llama-cpp
 * samples the drafted positions before the reply takes their tokens, so penalties over the reply
 * so far, a grammar and a bias that follow the reply would see it one step behind.
 */
function draftable(sampling: SequenceEvaluateOptions): boolean {
  return (
    sampling.repeatPenalty === undefined &&
    sampling.grammarEvaluationState === undefined &&
    typeof sampling.tokenBias !== "function"
  );
}

/** Choice `choice`'s sampling options: the request's seed + choice (modulo 2^32); no seed stays none. */
function seededFor(sampling: SamplingOptions | undefined, choice: number): SamplingOptions | undefined {
  if (sampling?.seed === undefined) return sampling;
  return { ...sampling, seed: (sampling.seed + choice) >>> 0 };
}

/**
 * The request's max_tokens (LENGTH), or the context's room after the prompt when that is less
 * (CONTEXT_FULL); max_tokens when both are the same.
 */
function tokenBudget(maxTokens: number | undefined, room: number): TokenBudget {
  if (maxTokens !== undefined && maxTokens <= room) return { tokens: maxTokens, reason: FinishReason.LENGTH };
  return { tokens: room, reason: FinishReason.CONTEXT_FULL };
}

/**
 * While a call's arguments are written, the template's marker tokens are banned: a model that does
 * not know the tool well would otherwise keep writing `<tool_call>` into a string until max_tokens.
 */
function argumentsWithoutMarkers(
  loaded: LoadedModel,
  request: GenerateRequest,
  sampling: SequenceEvaluateOptions,
  parser: { readonly phase: string },
): void {
  const plain = sampling.tokenBias;
  const inArguments = tokenBiasOf(loaded, request.sampling?.logitBias ?? {}, templateMarkerTokens(loaded.model));
  const free = plain ?? tokenBiasOf(loaded, {});
  sampling.tokenBias = () => (parser.phase === "arguments" ? inArguments : typeof free === "function" ? free() : free);
}

/** For a chat with a reasoning budget and a template with reasoning segments: how to close one. */
function reasoningClose(loaded: LoadedModel, request: GenerateRequest): ReasoningClose | undefined {
  const budget = request.input.case === "chat" ? request.input.value.reasoningBudget : undefined;
  const reasoning = loaded.replySyntax.reasoning;
  const suffix = reasoning?.closeWritten ?? reasoning?.close;
  if (budget === undefined || suffix === undefined) return undefined;
  return { budget, tokens: loaded.model.tokenize(suffix, true) };
}
