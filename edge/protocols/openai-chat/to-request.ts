import { create } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { toProtoRole } from "../../roles.js";
import { commonRequestInit } from "../openai-common/fields.js";
import { responseFormatConstraint } from "../openai-common/response-format.js";
import type { ChatRequest } from "./schema.js";

/** Text parts are joined with a newline between them. */
function toContent(content: ChatRequest["messages"][number]["content"]): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("\n");
}

export function toGenerateRequest(body: ChatRequest): GenerateRequest {
  const topLogprobs = body.logprobs === true ? (body.top_logprobs ?? 0) : 0;
  return create(GenerateRequestSchema, {
    ...commonRequestInit(body, body.max_completion_tokens ?? body.max_tokens),
    input: {
      case: "chat",
      value: { messages: body.messages.map((m) => ({ role: toProtoRole(m.role), content: toContent(m.content) })) },
    },
    logprobs: body.logprobs === true,
    topLogprobs,
    constraint: responseFormatConstraint(body.response_format),
  });
}
