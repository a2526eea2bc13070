// A validated completions body → the proto's GenerateRequest (a raw prompt, limits, logprobs).
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, type GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { commonRequestInit } from "../openai-common/fields.js";
import { responseFormatConstraint } from "../openai-common/response-format.js";
import { logprobsCount, type CompletionRequest } from "./schema.js";

export function toGenerateRequest(body: CompletionRequest): GenerateRequest {
  const count = logprobsCount(body);
  return create(GenerateRequestSchema, {
    ...commonRequestInit(body, body.max_tokens),
    input: { case: "prompt", value: body.prompt },
    logprobs: count !== null,
    topLogprobs: count ?? 0,
    // `echo` with `logprobs` scores the prompt's own tokens.
    promptLogprobs: body.echo === true && count !== null,
    constraint: responseFormatConstraint(body.response_format, body.grammar),
  });
}
