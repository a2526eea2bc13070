// A validated Responses body → the proto's GenerateRequest: the fields the table maps (schema.ts,
// RESPONSES_FIELDS), then the input items, instructions and tools.
import { openReasoning } from "./encrypted-reasoning.js";
import { COMPACTION_PROMPT, summaryMessage } from "./compaction/compaction-prompt.js";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  Role,
  ToolChoice,
  type ChatMessageSchema,
  type ChatSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { contentOf } from "../../core/media/parts.js";
import { toProtoRole } from "../../fields/roles.js";
import { newDraft, writeFields } from "../../fields/field-table.js";
import {
  compactionTriggered,
  RESPONSES_FIELDS,
  type ResponsesInputItem,
  type ResponsesMessageItem,
  type ResponsesRequest,
} from "./schema.js";
import { functionTools } from "./tools.js";

type MessageInit = MessageInitShape<typeof ChatMessageSchema>;

/**
 * Text parts joined with a newline between them (as chat text parts are); with images, text and image parts in
 * order (core/media/). `at` is the parts' path in the request (`input[2].content`).
 */
function toContent(content: ResponsesMessageItem["content"], at: string): ReturnType<typeof contentOf> {
  if (typeof content === "string") return { content };
  return contentOf(
    content.map((part, j) => {
      if (typeof part === "string") return part;
      const where = `${at}[${j}]`;
      return part.file_id === undefined
        ? { source: { kind: "url", url: part.image_url ?? "" }, part: where, field: `${where}.image_url` }
        : { source: { kind: "file", fileId: part.file_id }, part: where, field: `${where}.file_id` };
    }),
  );
}

/** A reasoning item's text: its reasoning_text parts, else what its encrypted_content holds, else its summary. */
function reasoningText(item: Extract<ResponsesInputItem, { type: "reasoning" }>): string {
  const content = (item.content ?? []).map((part) => part.text);
  if (content.length > 0) return content.join("\n");
  const sealed = item.encrypted_content == null ? undefined : openReasoning(item.encrypted_content);
  return sealed ?? (item.summary ?? []).map((part) => part.text).join("\n");
}

/**
 * Input items as chat messages: consecutive function_call items join the assistant message
 * before them (or make one), function_call_output items become tool messages, and a reasoning
 * item's text becomes the reasoning of the assistant message that follows it (dropped when no
 * assistant message or call follows).
 */
function toMessages(
  items: readonly ResponsesInputItem[],
  indexOf: (item: ResponsesInputItem) => number,
): MessageInit[] {
  const out: MessageInit[] = [];
  let reasoning: string[] = [];
  /** The reasoning waiting for the next assistant message, once. */
  const takeReasoning = (): { reasoning?: string } => {
    const text = reasoning.filter((r) => r !== "").join("\n");
    reasoning = [];
    return text === "" ? {} : { reasoning: text };
  };
  for (const item of items) {
    switch (item.type) {
      case "reasoning":
        reasoning.push(reasoningText(item));
        break;
      case "compaction":
        // The summary, as text through the template: never raw tokens (docs/contract.md, "Compaction").
        out.push({ role: Role.USER, content: summaryMessage(item.summary) });
        break;
      case "compaction_trigger":
        // Always last (schema.ts): the compaction prompt is the last user turn instead.
        out.push({ role: Role.USER, content: COMPACTION_PROMPT });
        break;
      case "function_call_output":
        out.push({
          role: Role.TOOL,
          toolCallId: item.call_id,
          ...toContent(item.output, `input[${indexOf(item)}].output`),
        });
        break;
      case "function_call": {
        const call = { id: item.call_id, name: item.name, arguments: item.arguments };
        const last = out.at(-1);
        if (last?.role === Role.ASSISTANT && reasoning.length === 0) last.toolCalls = [...(last.toolCalls ?? []), call];
        else out.push({ role: Role.ASSISTANT, content: "", ...takeReasoning(), toolCalls: [call] });
        break;
      }
      case "message": {
        const role = toProtoRole(item.role);
        const content = toContent(item.content, `input[${indexOf(item)}].content`);
        out.push({ role, ...content, ...(role === Role.ASSISTANT ? takeReasoning() : {}) });
        break;
      }
      default: {
        const unknownItem: never = item;
        throw new Error(`unknown input item ${String(unknownItem)}`);
      }
    }
  }
  return out;
}

/**
 * The items the prompt is rendered from: a compaction item stands for everything before it, so of
 * the items before the latest one only the user messages are kept (what /v1/responses/compact
 * answers with; docs/contract.md, "Compaction").
 */
export function compactedWindow(items: readonly ResponsesInputItem[]): readonly ResponsesInputItem[] {
  const last = items.findLastIndex((item) => item.type === "compaction");
  if (last <= 0) return items;
  return items.filter((item, i) => i >= last || (item.type === "message" && item.role === "user"));
}

function toolChoiceInit(body: ResponsesRequest): Pick<MessageInitShape<typeof ChatSchema>, "toolChoice" | "toolName"> {
  const choice = body.tool_choice;
  if (choice == null) return {};
  if (typeof choice === "object") return { toolChoice: ToolChoice.FUNCTION, toolName: choice.name };
  return { toolChoice: { auto: ToolChoice.AUTO, none: ToolChoice.NONE, required: ToolChoice.REQUIRED }[choice] };
}

/**
 * `instructions` is the first, system message; a string `input` is one user message. A compaction
 * (a last compaction_trigger item) offers no tools and takes no output format: the summary is text.
 */
export function toGenerateRequest(request: ResponsesRequest): GenerateRequest {
  const body = compactionTriggered(request) ? { ...request, tools: null, tool_choice: null, text: null } : request;
  const { request: init, sampling, chat } = writeFields(RESPONSES_FIELDS, body, newDraft());
  const items =
    typeof body.input === "string"
      ? [{ role: Role.USER, content: body.input }]
      : toMessages(compactedWindow(body.input), (item) => (body.input as ResponsesInputItem[]).indexOf(item));
  const instructions = body.instructions ?? "";
  return create(GenerateRequestSchema, {
    ...init,
    sampling,
    input: {
      case: "chat",
      value: {
        ...chat,
        messages: [...(instructions === "" ? [] : [{ role: Role.SYSTEM, content: instructions }]), ...items],
        tools: functionTools(body.tools).map((t) => ({
          name: t.name,
          description: t.description ?? "",
          parameters: t.parameters == null ? "" : JSON.stringify(t.parameters),
        })),
        ...toolChoiceInit(body),
      },
    },
  });
}
