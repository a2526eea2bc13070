// A validated completions body → the proto's GenerateRequest: the fields the table maps
// (schema.ts, COMPLETION_FIELDS), then the prompt (with a suffix: an infill, the prompt its prefix) and
// the legacy logprobs with `echo`.
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, type GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { newDraft, writeFields } from "../../fields/field-table.js";
import { COMPLETION_FIELDS, isInfill, logprobsCount, type CompletionRequest } from "./schema.js";

export function toGenerateRequest(body: CompletionRequest): GenerateRequest {
  const { request, sampling } = writeFields(COMPLETION_FIELDS, body, newDraft());
  const count = logprobsCount(body);
  return create(GenerateRequestSchema, {
    ...request,
    sampling,
    input: isInfill(body)
      ? { case: "infill", value: { prefix: body.prompt, suffix: body.suffix ?? "" } }
      : { case: "prompt", value: body.prompt },
    logprobs: count !== null,
    topLogprobs: count ?? 0,
    // `echo` with `logprobs` scores the prompt's own tokens.
    promptLogprobs: body.echo === true && count !== null,
  });
}
