// A validated Messages body → the proto's GenerateRequest: the fields the table maps (schema.ts,
// MESSAGES_FIELDS), then the conversation (messages, system, tools, thinking) and cache marks.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ChatSchema,
  GenerateRequestSchema,
  Role,
  ToolChoice,
  type Chat,
  type ChatMessageSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { contentOf, type ImageRef } from "../../core/media/parts.js";
import { newDraft, writeFields } from "../../fields/field-table.js";
import { effortBudget } from "../../fields/reasoning-effort.js";
import { refuseThread } from "./threads.js";
import { cacheMarksOf } from "./cache-control.js";
import {
  MESSAGES_FIELDS,
  type AnthropicBlock,
  type AnthropicRole,
  type CountTokensRequest,
  type ImageBlock,
  type MessagesRequest,
} from "./schema.js";

export type MessageInit = MessageInitShape<typeof ChatMessageSchema>;

/** Text blocks are joined with a newline between them (as chat text parts are). */
function joinText(blocks: readonly { type: string; text?: string }[]): string {
  return blocks.flatMap((b) => (b.type === "text" && b.text !== undefined ? [b.text] : [])).join("\n");
}

/** An image block as the media layer's reference, at `at` (its path in the request). */
function imageRef(block: ImageBlock, at: string): ImageRef {
  const { source } = block;
  return source.type === "base64"
    ? {
        source: { kind: "base64", data: source.data, mimeType: source.media_type },
        part: at,
        field: `${at}.source.data`,
      }
    : { source: { kind: "url", url: source.url }, part: at, field: `${at}.source.url` };
}

/**
 * A tool result's content (a tool reference as a line naming the tool it loads, images where they stand); an
 * error result says so, since the template has no error flag.
 */
function resultContent(block: Extract<AnthropicBlock, { type: "tool_result" }>, at: string): MessageInit {
  const items: (string | ImageRef)[] =
    block.content == null
      ? [""]
      : typeof block.content === "string"
        ? [block.content]
        : block.content.map((b, k) =>
            b.type === "tool_reference"
              ? `Tool loaded: ${b.tool_name}`
              : b.type === "image"
                ? imageRef(b, `${at}.content[${k}]`)
                : b.text,
          );
  if (block.is_error === true) {
    if (typeof items[0] === "string") items[0] = `Error: ${items[0]}`;
    else items.unshift("Error:");
  }
  return { role: Role.TOOL, toolCallId: block.tool_use_id, ...contentOf(items) };
}

/**
 * One Anthropic message as chat messages: a user message's tool results become tool messages
 * (in order), followed by its text and images as a user message; an assistant message carries its
 * thinking as reasoning, its text, and its tool_use blocks as calls. `index` is the message's in `messages`.
 */
function toMessages(role: AnthropicRole, content: string | readonly AnthropicBlock[], index: number): MessageInit[] {
  if (role === "system")
    return [{ role: Role.SYSTEM, content: typeof content === "string" ? content : joinText(content) }];
  if (typeof content === "string") return [{ role: role === "user" ? Role.USER : Role.ASSISTANT, content }];
  if (role === "assistant") {
    return [
      {
        role: Role.ASSISTANT,
        content: joinText(content),
        reasoning: content.flatMap((b) => (b.type === "thinking" ? [b.thinking] : [])).join("\n"),
        toolCalls: content.flatMap((b) =>
          b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input) }] : [],
        ),
      },
    ];
  }
  const at = (j: number) => `messages[${index}].content[${j}]`;
  const out: MessageInit[] = content.flatMap((b, j) => (b.type === "tool_result" ? [resultContent(b, at(j))] : []));
  const items = content.flatMap((b, j): (string | ImageRef)[] =>
    b.type === "text" ? [b.text] : b.type === "image" ? [imageRef(b, at(j))] : [],
  );
  const user = contentOf(items);
  if (user.content !== "" || (user.parts ?? []).length > 0 || out.length === 0) out.push({ role: Role.USER, ...user });
  return out;
}

function toolChoiceInit(
  body: CountTokensRequest,
): Pick<MessageInitShape<typeof ChatSchema>, "toolChoice" | "toolName" | "parallelToolCalls"> {
  const choice = body.tool_choice;
  const parallel =
    choice != null && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true
      ? { parallelToolCalls: false }
      : {};
  switch (choice?.type) {
    case undefined:
      return {};
    case "auto":
      return { toolChoice: ToolChoice.AUTO, ...parallel };
    case "any":
      return { toolChoice: ToolChoice.REQUIRED, ...parallel };
    case "tool":
      return { toolChoice: ToolChoice.FUNCTION, toolName: choice.name, ...parallel };
    case "none":
      return { toolChoice: ToolChoice.NONE };
  }
}

/**
 * How much the reply may reason: enabled thinking's `budget_tokens`; adaptive thinking's
 * `output_config.effort` (as every protocol's effort maps: edge/fields/reasoning-effort.ts); disabled
 * thinking none at all (the sidecar closes the segment at once). No limit otherwise.
 */
function thinkingBudget(
  body: CountTokensRequest & { output_config?: { effort?: string | null | undefined } | null | undefined },
): {
  reasoningBudget?: number;
} {
  const budget =
    body.thinking?.type === "disabled"
      ? 0
      : body.thinking?.type === "enabled"
        ? (body.thinking.budget_tokens ?? undefined)
        : effortBudget(body.output_config?.effort);
  return budget === undefined ? {} : { reasoningBudget: budget };
}

/** The chat messages of the request: `system` (when given and not empty) first, then each message's, in order. */
export function chatMessagesOf(body: CountTokensRequest): { system: MessageInit[]; groups: MessageInit[][] } {
  const system = body.system == null ? "" : typeof body.system === "string" ? body.system : joinText(body.system);
  return {
    system: system === "" ? [] : [{ role: Role.SYSTEM, content: system }],
    groups: body.messages.map((m, i) => toMessages(m.role, m.content, i)),
  };
}

/** `system` (when given and not empty) becomes the first, system message; tools travel with the chat. */
export function toChat(body: CountTokensRequest & Partial<Pick<MessagesRequest, "output_config">>): Chat {
  const { system, groups } = chatMessagesOf(body);
  return create(ChatSchema, {
    messages: [...system, ...groups.flat()],
    tools: (body.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? "",
      parameters: JSON.stringify(t.input_schema ?? {}),
    })),
    ...toolChoiceInit(body),
    ...thinkingBudget(body),
  });
}

/**
 * The fields that map alone come from the field table (schema.ts); the conversation and cache marks are mapped here.
 */
export function toGenerateRequest(body: MessagesRequest): GenerateRequest {
  refuseThread(body.thread);
  const { request, sampling } = writeFields(MESSAGES_FIELDS, body, newDraft());
  return create(GenerateRequestSchema, {
    ...request,
    sampling,
    input: { case: "chat", value: toChat(body) },
    cacheMarks: cacheMarksOf(body, chatMessagesOf(body)),
  });
}
