import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema, Role, type GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { toProtoRole } from "../../roles.js";
import { textFormatConstraint } from "../openai-common/response-format.js";
import { tokenLimit } from "../../fields.js";
import type { ResponsesMessageItem, ResponsesRequest } from "./schema.js";

/** Text parts are joined with a newline between them (as chat text parts are). */
function toText(content: ResponsesMessageItem["content"]): string {
  return typeof content === "string" ? content : content.join("\n");
}

/** `instructions` is the first, system message; a string `input` is one user message. */
export function toGenerateRequest(body: ResponsesRequest): GenerateRequest {
  const items =
    typeof body.input === "string"
      ? [{ role: Role.USER, content: body.input }]
      : body.input.map((item) => ({ role: toProtoRole(item.role), content: toText(item.content) }));
  const instructions = body.instructions ?? "";
  const sampling: { temperature?: number; topP?: number } = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.topP = body.top_p;
  return create(GenerateRequestSchema, {
    model: body.model ?? "",
    input: {
      case: "chat",
      value: { messages: [...(instructions === "" ? [] : [{ role: Role.SYSTEM, content: instructions }]), ...items] },
    },
    sampling,
    constraint: textFormatConstraint(body.text?.format),
    ...(body.max_output_tokens == null ? {} : { maxTokens: tokenLimit(body.max_output_tokens) }),
  });
}
