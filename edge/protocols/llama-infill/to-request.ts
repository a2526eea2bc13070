// A validated /infill body → the proto's GenerateRequest: the fields the table maps (schema.ts,
// INFILL_FIELDS), then the infill itself (prefix, suffix, prompt, files, line rules).
import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, type GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { newDraft, writeFields } from "../../fields/field-table.js";
import { INFILL_FIELDS, type InfillRequest } from "./schema.js";

export function toGenerateRequest(body: InfillRequest): GenerateRequest {
  const { request, sampling } = writeFields(INFILL_FIELDS, body, newDraft());
  return create(GenerateRequestSchema, {
    ...request,
    sampling,
    input: {
      case: "infill",
      value: {
        prefix: body.input_prefix,
        suffix: body.input_suffix,
        prompt: body.prompt ?? "",
        files: (body.input_extra ?? []).map((file) => ({ filename: file.filename ?? "", text: file.text })),
        minIndent: body.n_indent ?? 0,
        timeLimitMs: Math.max(0, Math.min(body.t_max_predict_ms ?? 0, 0xffff_ffff)),
      },
    },
  });
}
