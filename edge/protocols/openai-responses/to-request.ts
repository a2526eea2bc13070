import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  Role,
  ToolChoice,
  type ChatMessageSchema,
  type ChatSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { toProtoRole } from "../../roles.js";
import { textFormatConstraint } from "../openai-common/response-format.js";
import { tokenLimit } from "../../fields.js";
import { functionTools, type ResponsesInputItem, type ResponsesMessageItem, type ResponsesRequest } from "./schema.js";

type MessageInit = MessageInitShape<typeof ChatMessageSchema>;

/** Text parts are joined with a newline between them (as chat text parts are). */
function toText(content: ResponsesMessageItem["content"]): string {
  return typeof content === "string" ? content : content.join("\n");
}

/**
 * Input items as chat messages: function_call items join the assistant message before them
 * (or make one), function_call_output items become tool messages, reasoning items are dropped.
 */
function toMessages(items: readonly ResponsesInputItem[]): MessageInit[] {
  const out: MessageInit[] = [];
  for (const item of items) {
    if (item.type === "reasoning") continue;
    if ("call_id" in item) {
      if (item.type === "function_call_output") {
        out.push({ role: Role.TOOL, toolCallId: item.call_id, content: toText(item.output) });
        continue;
      }
      if (item.type !== "function_call") continue;
      const call = { id: item.call_id, name: item.name, arguments: item.arguments };
      const last = out.at(-1);
      if (last?.role === Role.ASSISTANT) last.toolCalls = [...(last.toolCalls ?? []), call];
      else out.push({ role: Role.ASSISTANT, content: "", toolCalls: [call] });
      continue;
    }
    if ("role" in item) out.push({ role: toProtoRole(item.role), content: toText(item.content) });
  }
  return out;
}

function toolChoiceInit(body: ResponsesRequest): Pick<MessageInitShape<typeof ChatSchema>, "toolChoice" | "toolName"> {
  const choice = body.tool_choice;
  if (choice == null) return {};
  if (typeof choice === "object") return { toolChoice: ToolChoice.FUNCTION, toolName: choice.name };
  return { toolChoice: { auto: ToolChoice.AUTO, none: ToolChoice.NONE, required: ToolChoice.REQUIRED }[choice] };
}

/** `instructions` is the first, system message; a string `input` is one user message. */
export function toGenerateRequest(body: ResponsesRequest): GenerateRequest {
  const items = typeof body.input === "string" ? [{ role: Role.USER, content: body.input }] : toMessages(body.input);
  const instructions = body.instructions ?? "";
  const sampling: { temperature?: number; topP?: number } = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.topP = body.top_p;
  return create(GenerateRequestSchema, {
    model: body.model ?? "",
    input: {
      case: "chat",
      value: {
        messages: [...(instructions === "" ? [] : [{ role: Role.SYSTEM, content: instructions }]), ...items],
        tools: functionTools(body).map((t) => ({
          name: t.name,
          description: t.description ?? "",
          parameters: t.parameters == null ? "" : JSON.stringify(t.parameters),
        })),
        ...toolChoiceInit(body),
        ...(body.parallel_tool_calls != null ? { parallelToolCalls: body.parallel_tool_calls } : {}),
      },
    },
    sampling,
    constraint: textFormatConstraint(body.text?.format),
    ...(body.max_output_tokens == null ? {} : { maxTokens: tokenLimit(body.max_output_tokens) }),
  });
}
