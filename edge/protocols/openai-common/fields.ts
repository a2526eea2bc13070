// Request fields shared by /v1/chat/completions and /v1/completions, and their
// translation into the proto's SamplingOptions / GenerateRequest fields.
// Every optional field also accepts null (many clients send `"temperature": null`).
import * as z from "zod";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SamplingOptionsSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { integer, uint32, MAX_STOP_SEQUENCES, nonEmptyStops, positiveInteger, tokenLimit, UINT32_MAX } from "../../fields/fields.js";
import { keepAliveField } from "../../fields/keep-alive.js";

/** OpenAI's most choices per request; the model's sequences are the limit that counts (core/choice-count.ts). */
export const MAX_CHOICES = 128;

const tokenId = z
  .string()
  .regex(/^\d{1,10}$/, { error: "logit_bias keys are token ids (decimal integers)" })
  .refine((key) => Number(key) <= UINT32_MAX, { error: "token id out of range" });

export const commonFields = {
  model: z.string().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: positiveInteger().nullish(),
  // Choices of the one prompt (proto: GenerateRequest.n); at most the model's sequences (core/choice-count.ts).
  n: z
    .number()
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= MAX_CHOICES, { error: `expected an integer from 1 to ${MAX_CHOICES}` })
    .nullish(),
  stop: z
    .union([
      z.string(),
      z.array(z.string()).max(MAX_STOP_SEQUENCES, {
        message: `at most ${MAX_STOP_SEQUENCES} stop sequences are supported`,
      }),
    ])
    .nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: uint32().nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: integer().nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  repeat_penalty: z.number().gt(0).max(10).nullish(),
  logit_bias: z.record(tokenId, z.number().min(-100).max(100)).nullish(),
  keep_alive: keepAliveField(),
};

const common = z.object(commonFields);
export type CommonFields = z.output<typeof common>;

type SamplingInit = MessageInitShape<typeof SamplingOptionsSchema>;
/** The GenerateRequest fields both endpoints set the same way. */
export interface CommonRequestInit {
  model: string;
  sampling: SamplingInit;
  stop: string[];
  maxTokens?: number;
  n?: number;
}

export function toSampling(body: CommonFields): SamplingInit {
  const sampling: SamplingInit = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.topP = body.top_p;
  if (body.top_k != null) sampling.topK = body.top_k;
  if (body.min_p != null) sampling.minP = body.min_p;
  // OpenAI seeds are any integer; the proto's is uint32: reduce modulo 2^32.
  if (body.seed != null) sampling.seed = body.seed >>> 0;
  if (body.presence_penalty != null) sampling.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) sampling.frequencyPenalty = body.frequency_penalty;
  if (body.repeat_penalty != null) sampling.repeatPenalty = body.repeat_penalty;
  if (body.logit_bias != null) {
    const bias: Record<number, number> = {};
    for (const [id, value] of Object.entries(body.logit_bias)) bias[Number(id)] = value;
    sampling.logitBias = bias;
  }
  return sampling;
}

/** Empty stop strings mean nothing and are dropped. */
export function toStop(stop: CommonFields["stop"]): string[] {
  if (stop == null) return [];
  return nonEmptyStops(typeof stop === "string" ? [stop] : stop);
}

/** The GenerateRequest fields common to both endpoints (all but input and logprobs); `n` only above 1. */
export function commonRequestInit(body: CommonFields, maxTokens: number | null | undefined): CommonRequestInit {
  const init: CommonRequestInit = {
    model: body.model ?? "",
    sampling: toSampling(body),
    stop: toStop(body.stop),
  };
  if (maxTokens != null) init.maxTokens = tokenLimit(maxTokens);
  if (body.n != null && body.n > 1) init.n = body.n;
  return init;
}
