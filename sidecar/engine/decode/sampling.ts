// Sampling options: checked, and turned into node-llama-cpp's evaluation options (temperature,
// penalties, logit bias, stops, logprobs).
import { TokenBias, type SequenceEvaluateOptions, type Token } from "node-llama-cpp";
import type { SamplingOptions } from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";
import type { LoadedModel } from "../llama/model.js";

// Limits the proto documents (GenerateRequest.top_logprobs and .stop); the edge's twins are in
// edge/fields/fields.ts (test/proto-limits.test.ts checks they agree).
export const MAX_TOP_LOGPROBS = 20;
export const MAX_STOP_SEQUENCES = 16;
export const MAX_STOP_LENGTH = 256;
/** Recent tokens the penalties look at. */
const PENALTY_WINDOW = 64;

function inRange(name: string, value: number | undefined, min: number, max: number, open = false): void {
  if (value === undefined) return;
  const ok = Number.isFinite(value) && (open ? value > min : value >= min) && value <= max;
  if (!ok)
    throw invalidArgument(`${name} must be ${open ? "above" : "at least"} ${min} and at most ${max}, got ${value}`);
}

/**
 * Checks sampling options and builds node-llama-cpp's evaluation options from them.
 * `history` is the list the penalties read (the sequence's generated tokens so far).
 */
/**
 * The seed llama.cpp reads as "pick one at random" (LLAMA_DEFAULT_SEED). A caller's seed of that
 * value (OpenAI's `seed: -1` arrives as it) is sampled with the seed below it, so that it repeats.
 */
const LLAMA_RANDOM_SEED = 0xffffffff;

export function buildSampling(
  loaded: Pick<LoadedModel, "model" | "vocabularySize">,
  options: SamplingOptions | undefined,
  history: readonly Token[],
): SequenceEvaluateOptions {
  const o = options ?? ({} as Partial<SamplingOptions>);
  inRange("temperature", o.temperature, 0, 2);
  inRange("top_p", o.topP, 0, 1, true);
  inRange("min_p", o.minP, 0, 1);
  inRange("presence_penalty", o.presencePenalty, -2, 2);
  inRange("frequency_penalty", o.frequencyPenalty, -2, 2);
  inRange("repeat_penalty", o.repeatPenalty, 0, 10, true);

  const evaluate: SequenceEvaluateOptions = { temperature: o.temperature ?? 1 };
  if (o.topP !== undefined) evaluate.topP = o.topP;
  // Unset top_k / top_p keep llama.cpp's usual defaults (40 and 0.95, as llama-server does);
  // top_k 0 turns the filter off.
  if (o.topK !== undefined) evaluate.topK = o.topK;
  if (o.minP !== undefined) evaluate.minP = o.minP;
  if (o.seed !== undefined) evaluate.seed = o.seed === LLAMA_RANDOM_SEED ? LLAMA_RANDOM_SEED - 1 : o.seed;
  else evaluate.seed = Math.floor(Math.random() * LLAMA_RANDOM_SEED);

  const presence = o.presencePenalty ?? 0;
  const frequency = o.frequencyPenalty ?? 0;
  const repeat = o.repeatPenalty ?? 1;
  if (presence !== 0 || frequency !== 0 || repeat !== 1) {
    evaluate.repeatPenalty = {
      punishTokens: () => history.slice(-PENALTY_WINDOW),
      maxPunishTokens: PENALTY_WINDOW,
      penalty: repeat,
      presencePenalty: presence,
      frequencyPenalty: frequency,
    };
  }

  if (Object.keys(o.logitBias ?? {}).length > 0) evaluate.tokenBias = tokenBiasOf(loaded, o.logitBias ?? {});
  return evaluate;
}

/** The request's logit bias, plus `banned` tokens that may never be sampled. */
export function tokenBiasOf(
  loaded: Pick<LoadedModel, "model" | "vocabularySize">,
  logitBias: Readonly<Record<number, number>>,
  banned: readonly Token[] = [],
): TokenBias {
  const tokenBias = new TokenBias(loaded.model.tokenizer);
  const vocabulary = loaded.vocabularySize || Number.POSITIVE_INFINITY;
  for (const [key, value] of Object.entries(logitBias)) {
    const token = Number(key);
    if (!Number.isInteger(token) || token < 0 || token >= vocabulary) {
      throw invalidArgument(`logit_bias names token ${key}, which is not in the model's vocabulary`);
    }
    inRange(`logit_bias[${key}]`, value, -100, 100);
    tokenBias.set(token as Token, value <= -100 ? "never" : { logit: value });
  }
  for (const token of banned) tokenBias.set(token, "never");
  return tokenBias;
}

export function checkStops(stops: readonly string[]): void {
  if (stops.length > MAX_STOP_SEQUENCES)
    throw invalidArgument(`stop allows at most ${MAX_STOP_SEQUENCES} sequences, got ${stops.length}`);
  for (const stop of stops) {
    if (stop.length === 0) throw invalidArgument("stop sequences must not be empty");
    if (stop.length > MAX_STOP_LENGTH)
      throw invalidArgument(`a stop sequence may be at most ${MAX_STOP_LENGTH} characters`);
  }
}

export function checkLogprobs(topLogprobs: number): void {
  if (topLogprobs > MAX_TOP_LOGPROBS)
    throw invalidArgument(`top_logprobs must be at most ${MAX_TOP_LOGPROBS}, got ${topLogprobs}`);
}
