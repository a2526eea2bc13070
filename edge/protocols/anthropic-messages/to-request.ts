import { create } from "@bufbuild/protobuf";
import {
  ChatSchema,
  GenerateRequestSchema,
  Role,
  type Chat,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { toProtoRole } from "../../roles.js";
import { nonEmptyStops, tokenLimit } from "../../fields.js";
import type { AnthropicContent, CountTokensRequest, MessagesRequest } from "./schema.js";

/** Text blocks are joined with a newline between them (as chat text parts are). */
function toText(content: AnthropicContent): string {
  if (typeof content === "string") return content;
  return content.map((block) => block.text).join("\n");
}

/** `system` (when given and not empty) becomes the first, system message. */
export function toChat(body: CountTokensRequest): Chat {
  const system = body.system == null ? "" : toText(body.system);
  return create(ChatSchema, {
    messages: [
      ...(system === "" ? [] : [{ role: Role.SYSTEM, content: system }]),
      ...body.messages.map((m) => ({ role: toProtoRole(m.role), content: toText(m.content) })),
    ],
  });
}

export function toGenerateRequest(body: MessagesRequest): GenerateRequest {
  const sampling: { temperature?: number; topP?: number; topK?: number } = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.topP = body.top_p;
  if (body.top_k != null) sampling.topK = body.top_k;
  return create(GenerateRequestSchema, {
    model: body.model,
    input: { case: "chat", value: toChat(body) },
    sampling,
    maxTokens: tokenLimit(body.max_tokens),
    stop: nonEmptyStops(body.stop_sequences ?? []),
  });
}
