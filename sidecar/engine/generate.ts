import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LlamaContextSequence, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import {
  FinishReason,
  type GenerateRequest,
  type GenerateResponseSchema,
  type TokenAlternative,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { constraintState } from "./constraint.js";
import { invalidArgument, promptTooLong } from "./errors.js";
import type { EngineMetrics } from "./metrics.js";
import type { LoadedModel } from "./model.js";
import { renderPrompt } from "./prompt.js";
import { buildSampling, checkLogprobs, checkStops, templateMarkerTokens, tokenBiasOf } from "./sampling.js";
import { StopSequenceFilter, type TextStep } from "./text-stream.js";
import { replyReader } from "./reply-reader.js";
import { TokenTextDecoder } from "./token-text.js";

export type GenerateEvent = MessageInitShape<typeof GenerateResponseSchema>;
type AlternativeInit = Pick<TokenAlternative, "id" | "piece" | "logprob">;

/** The smallest log-probability reported (a probability of 0 has none). */
const MIN_LOGPROB = -9999;

function logOf(probability: number): number {
  return probability > 0 ? Math.max(Math.log(probability), MIN_LOGPROB) : MIN_LOGPROB;
}

/** Where the first token is among the events (`start` comes first). */
export const FIRST_TOKEN_POSITION = 1;

/**
 * Runs one request: validates it, renders and tokenizes the prompt, checks its fit, builds the
 * sampler, waits for a sequence, then streams `start`, `token`… and `finish`. Everything that can
 * be refused is refused before `start`. Aborting `signal` ends generation at the next token.
 */
export async function* generate(
  loaded: LoadedModel,
  request: GenerateRequest,
  signal: AbortSignal,
  metrics: EngineMetrics,
): AsyncGenerator<GenerateEvent> {
  checkStops(request.stop);
  checkLogprobs(request.topLogprobs);
  const prompt = renderPrompt(loaded, request.input);
  const promptTokens = prompt.tokens.length;
  if (promptTokens === 0) throw invalidArgument("the prompt is empty");
  if (promptTokens >= loaded.contextSize) throw promptTooLong(promptTokens, loaded.contextSize);
  const generated: Token[] = [];
  const sampling = buildSampling(loaded, request.sampling, generated);
  const constraint = await constraintState(loaded, request.constraint);
  if (constraint !== undefined && prompt.toolUse !== undefined) {
    throw invalidArgument("an output constraint (JSON or grammar) cannot be combined with tools the model may call; drop one, or set the tool choice to none");
  }
  if (constraint !== undefined) sampling.grammarEvaluationState = constraint.state;
  const reply = await replyReader(loaded, prompt);
  if (reply?.grammar !== undefined) {
    const grammar = reply.grammar;
    sampling.grammarEvaluationState = () => grammar.current();
  }
  const parser = reply?.parser;
  if (parser !== undefined && reply?.grammar !== undefined) argumentsWithoutMarkers(loaded, request, sampling, parser);
  const budget = Math.min(request.maxTokens ?? Number.POSITIVE_INFINITY, loaded.contextSize - promptTokens);

  const queuedAt = performance.now();
  let sequence: LlamaContextSequence;
  try {
    sequence = await loaded.pool.acquire(prompt.tokens, signal, request.clientId);
  } catch (error) {
    if (signal.aborted) metrics.requestsCancelledInQueue++;
    else metrics.requestsRejected++;
    throw error;
  }
  const queueMs = performance.now() - queuedAt;
  metrics.requestsStarted++;
  metrics.generationsActive++;
  try {
    const cachedTokens = await reuseCachedPrefix(loaded, sequence, prompt.tokens);
    yield { event: { case: "start", value: { model: loaded.id, promptTokens, cachedTokens } } };

    const decoder = new TokenTextDecoder(loaded.model);
    const filter = new StopSequenceFilter([...request.stop, ...prompt.stopTexts, ...(constraint?.stopTexts ?? [])]);
    const userStops = new Set(request.stop);
    const wantLogprobs = request.logprobs || request.topLogprobs > 0;
    const promptStart = performance.now();
    let firstTokenAt: number | undefined;
    let reason = FinishReason.STOP;
    let stopSequence = "";
    let stoppedByText = false;
    let reasoningTokens = 0;

    const rest = budget > 0 ? await feedPrompt(sequence, prompt.tokens.slice(cachedTokens), signal) : [];
    if (budget <= 0) reason = FinishReason.LENGTH;
    else if (!signal.aborted) {
      const steps = evaluate(sequence, rest, sampling, wantLogprobs, request.topLogprobs > 0);
      const closing = reasoningClose(loaded, request);
      try {
        let replacement: Token[] | undefined;
        for (let next = await steps.next(); next.done !== true; next = await steps.next(replacement)) {
          replacement = undefined;
          if (signal.aborted) break;
          firstTokenAt ??= performance.now();
          let produced: readonly Step[] = [next.value];
          if (closing !== undefined && parser?.phase === "reasoning" && reasoningTokens >= closing.budget) {
            // The reasoning budget is spent: the segment's end goes into the reply in place of the
            // sampled token, and the model goes on from there.
            replacement = closing.tokens;
            produced = closing.tokens.map((token) => ({ token, probability: 1, alternatives: undefined }));
          }
          if (!(yield* emit(produced))) break;
        }
      } finally {
        await steps.return(undefined);
      }
    }
    function* emit(produced: readonly Step[]): Generator<GenerateEvent, boolean> {
      for (const step of produced) {
        if (prompt.stopTokens.has(step.token)) return false;
        generated.push(step.token);
        metrics.tokensGenerated++;
        const raw = decoder.push(step.token);
        // Stop sequences apply outside tool calls: argument JSON is never cut.
        const text: TextStep = parser?.inCall === true ? { text: filter.flush() + raw } : filter.push(raw);
        const phaseBefore = parser?.phase;
        const parts = parser?.push(text.text);
        // A token that opens, continues or closes a reasoning segment is a reasoning token.
        if (phaseBefore === "reasoning" || parser?.phase === "reasoning") reasoningTokens++;
        yield {
          event: {
            case: "token",
            value: {
              id: step.token,
              text: parts === undefined ? text.text : parts.content,
              piece: loaded.tokenBytes.of(step.token),
              ...(wantLogprobs ? { logprob: logOf(step.probability) } : {}),
              topLogprobs: topAlternatives(loaded, step.alternatives, request.topLogprobs),
              ...(parts !== undefined ? { reasoning: parts.reasoning, toolCalls: parts.calls } : {}),
            },
          },
        };
        if (text.stop !== undefined) {
          stoppedByText = true;
          if (userStops.has(text.stop)) stopSequence = text.stop;
          return false;
        }
        // A reply limited to one call ends when it is complete.
        if (parser !== undefined && prompt.toolUse?.parallel === false && parser.completedCalls > 0) return false;
        if (generated.length >= budget) {
          reason = FinishReason.LENGTH;
          return false;
        }
      }
      return true;
    }
    if (signal.aborted) {
      reason = FinishReason.ABORT;
      metrics.generationsAborted++;
    }
    let tail = "";
    let reasoningTail = "";
    if (!stoppedByText && reason !== FinishReason.ABORT) {
      const last = filter.push(decoder.flush());
      tail = last.text + (last.stop === undefined ? filter.flush() : "");
      if (constraint?.trimWhitespaceSuffix === true) tail = tail.trimEnd();
      if (last.stop !== undefined && userStops.has(last.stop)) stopSequence = last.stop;
    }
    if (parser !== undefined) {
      // Whatever completes a call at the very end has no token to travel with: the call stays incomplete.
      const parts = parser.push(tail);
      const held = parser.flush();
      tail = parts.content + held.content;
      reasoningTail = parts.reasoning + held.reasoning;
      if (reason === FinishReason.STOP && parser.completedCalls > 0) reason = FinishReason.TOOL_CALLS;
    }
    const end = performance.now();
    const timings = {
      queueMs,
      promptMs: (firstTokenAt ?? end) - promptStart,
      generationMs: firstTokenAt === undefined ? 0 : end - firstTokenAt,
    };
    if (reason !== FinishReason.ABORT) metrics.finished({ ...timings, promptTokens, completionTokens: generated.length });
    yield {
      event: {
        case: "finish",
        value: {
          reason,
          promptTokens,
          completionTokens: generated.length,
          cachedTokens,
          stopSequence,
          text: tail,
          reasoning: reasoningTail,
          reasoningTokens,
          timings,
        },
      },
    };
  } finally {
    metrics.generationsActive--;
    loaded.pool.release(sequence);
  }
}

/**
 * While a call's arguments are written, the template's marker tokens are banned: a model that does
 * not know the tool well would otherwise keep writing `<tool_call>` into a string until max_tokens.
 */
function argumentsWithoutMarkers(loaded: LoadedModel, request: GenerateRequest, sampling: SequenceEvaluateOptions, parser: { readonly phase: string }): void {
  const plain = sampling.tokenBias;
  const inArguments = tokenBiasOf(loaded, request.sampling?.logitBias ?? {}, templateMarkerTokens(loaded));
  const free = plain ?? tokenBiasOf(loaded, {});
  sampling.tokenBias = () => (parser.phase === "arguments" ? inArguments : typeof free === "function" ? free() : free);
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
async function feedPrompt(sequence: LlamaContextSequence, tokens: Token[], signal: AbortSignal): Promise<Token[]> {
  let start = 0;
  while (tokens.length - start > PROMPT_CHUNK_TOKENS && !signal.aborted) {
    await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(start, start + PROMPT_CHUNK_TOKENS));
    start += PROMPT_CHUNK_TOKENS;
  }
  return tokens.slice(start);
}

/** Keeps the sequence's cached tokens that the prompt starts with; returns how many. */
async function reuseCachedPrefix(loaded: LoadedModel, sequence: LlamaContextSequence, prompt: readonly Token[]): Promise<number> {
  // At least the prompt's last token is evaluated again: its logits pick the first reply token.
  const shared = Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, prompt.length - 1);
  if (sequence.nextTokenIndex > shared) {
    const end = sequence.nextTokenIndex;
    await loaded.scheduler.between(sequence, () => sequence.eraseContextTokenRanges([{ start: shared, end }]));
  }
  return shared;
}

interface Step {
  readonly token: Token;
  readonly probability: number;
  readonly alternatives: ReadonlyMap<Token, number> | undefined;
}

/** The steps of a generation; `next(tokens)` evaluates `tokens` in place of the last sampled one. */
async function* evaluate(
  sequence: LlamaContextSequence,
  input: Token[],
  sampling: SequenceEvaluateOptions,
  withLogprobs: boolean,
  withAlternatives: boolean,
): AsyncGenerator<Step, void, Token[] | undefined> {
  const options: SequenceEvaluateOptions = { ...sampling, contextShift: { strategy: "eraseBeginning" } };
  const metadata = sequence.evaluateWithMetadata(input, { confidence: withLogprobs, probabilities: withAlternatives }, options);
  try {
    let replacement: Token[] | undefined;
    for (let next = await metadata.next(); next.done !== true; next = await metadata.next(replacement)) {
      const out = next.value;
      const alternatives = "probabilities" in out ? (out.probabilities as ReadonlyMap<Token, number>) : undefined;
      const probability = withLogprobs ? ((out as { confidence?: number }).confidence ?? 1) : 1;
      replacement = yield { token: out.token, probability, alternatives };
    }
  } finally {
    await metadata.return(undefined as never);
  }
}

interface ReasoningClose {
  /** Reasoning tokens the reply may spend. */
  readonly budget: number;
  /** The reasoning segment's end marker, as the template writes it. */
  readonly tokens: Token[];
}

/** For a chat with a reasoning budget and a template with reasoning segments: how to close one. */
function reasoningClose(loaded: LoadedModel, request: GenerateRequest): ReasoningClose | undefined {
  const budget = request.input.case === "chat" ? request.input.value.reasoningBudget : undefined;
  const suffix = loaded.replySyntax.thought?.suffix;
  if (budget === undefined || suffix === undefined) return undefined;
  return { budget, tokens: loaded.model.tokenize(suffix, true) };
}

function topAlternatives(
  loaded: LoadedModel,
  probabilities: ReadonlyMap<Token, number> | undefined,
  count: number,
): AlternativeInit[] {
  if (probabilities === undefined || count === 0) return [];
  const out: AlternativeInit[] = [];
  for (const [id, probability] of probabilities) {
    if (out.length >= count) break;
    out.push({ id, piece: loaded.tokenBytes.of(id), logprob: logOf(probability) });
  }
  return out;
}
