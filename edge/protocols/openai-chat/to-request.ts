// A validated chat-completions body → the proto's GenerateRequest: the fields the table maps
// (schema.ts, CHAT_FIELDS), then the messages and tools.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  Role,
  ToolChoice,
  type ChatMessageSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { contentOf } from "../../core/media/parts.js";
import { toProtoRole } from "../../fields/roles.js";
import { newDraft, writeFields } from "../../fields/field-table.js";
import { CHAT_FIELDS, chatToolChoice, chatTools, type ChatRequest } from "./schema.js";

type Message = ChatRequest["messages"][number];

/** Text parts joined with a newline between them; with images, text and image parts in order (core/media/). */
function toContent(content: Message["content"], index: number): ReturnType<typeof contentOf> {
  if (content == null) return { content: "" };
  if (typeof content === "string") return { content };
  return contentOf(
    content.map((part, j) => {
      if (part.type === "text") return part.text;
      const at = `messages[${index}].content[${j}]`;
      return { source: { kind: "url", url: part.image_url.url }, part: at, field: `${at}.image_url.url` };
    }),
  );
}

function toMessage(m: Message, index: number): MessageInitShape<typeof ChatMessageSchema> {
  if (m.role === "tool") return { role: Role.TOOL, ...toContent(m.content, index), toolCallId: m.tool_call_id ?? "" };
  return {
    role: toProtoRole(m.role),
    ...toContent(m.content, index),
    toolCalls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    reasoning: m.reasoning_content ?? m.reasoning ?? "",
  };
}

function toolChoiceInit(body: ChatRequest): { toolChoice?: ToolChoice; toolName?: string } {
  const choice = chatToolChoice(body);
  switch (choice) {
    case undefined:
      return {};
    case "auto":
      return { toolChoice: ToolChoice.AUTO };
    case "none":
      return { toolChoice: ToolChoice.NONE };
    case "required":
      return { toolChoice: ToolChoice.REQUIRED };
    default:
      return { toolChoice: ToolChoice.FUNCTION, toolName: choice.name };
  }
}

/** The fields that map alone come from the field table (schema.ts); messages and tools are mapped here. */
export function toGenerateRequest(body: ChatRequest): GenerateRequest {
  const { request, sampling, chat } = writeFields(CHAT_FIELDS, body, newDraft());
  const tools = chatTools(body).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters === undefined ? "" : JSON.stringify(t.parameters),
  }));
  return create(GenerateRequestSchema, {
    ...request,
    sampling,
    input: { case: "chat", value: { ...chat, messages: body.messages.map(toMessage), tools, ...toolChoiceInit(body) } },
  });
}
