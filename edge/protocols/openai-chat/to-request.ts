// A validated chat-completions body → the proto's GenerateRequest (messages, tools, format, limits).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { effortBudget } from "../../fields/reasoning-effort.js";
import { GenerateRequestSchema, Role, ToolChoice, type ChatMessageSchema, type GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { toProtoRole } from "../../fields/roles.js";
import { commonRequestInit } from "../openai-common/fields.js";
import { responseFormatConstraint } from "../openai-common/response-format.js";
import { retentionMarks } from "../openai-common/prompt-cache.js";
import { chatToolChoice, chatTools, type ChatRequest } from "./schema.js";

type Message = ChatRequest["messages"][number];

/** Text parts are joined with a newline between them. */
function toContent(content: Message["content"]): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("\n");
}

function toMessage(m: Message): MessageInitShape<typeof ChatMessageSchema> {
  if (m.role === "tool") return { role: Role.TOOL, content: toContent(m.content), toolCallId: m.tool_call_id ?? "" };
  return {
    role: toProtoRole(m.role),
    content: toContent(m.content),
    toolCalls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    reasoning: m.reasoning_content ?? m.reasoning ?? "",
  };
}

function reasoningBudgetOf(effort: string | null | undefined): { reasoningBudget?: number } {
  const budget = effortBudget(effort);
  return budget === undefined ? {} : { reasoningBudget: budget };
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

export function toGenerateRequest(body: ChatRequest): GenerateRequest {
  const topLogprobs = body.logprobs === true ? (body.top_logprobs ?? 0) : 0;
  const tools = chatTools(body).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters === undefined ? "" : JSON.stringify(t.parameters),
  }));
  return create(GenerateRequestSchema, {
    ...commonRequestInit(body, body.max_completion_tokens ?? body.max_tokens),
    input: {
      case: "chat",
      value: {
        messages: body.messages.map(toMessage),
        tools,
        ...toolChoiceInit(body),
        ...(body.parallel_tool_calls != null ? { parallelToolCalls: body.parallel_tool_calls } : {}),
        ...reasoningBudgetOf(body.reasoning_effort),
        ...(body.chat_template_kwargs != null ? { templateVariables: JSON.stringify(body.chat_template_kwargs) } : {}),
      },
    },
    logprobs: body.logprobs === true,
    topLogprobs,
    constraint: responseFormatConstraint(body.response_format),
    cacheMarks: retentionMarks(body.prompt_cache_retention),
  });
}
