// Validated /api/chat and /api/generate bodies → the proto's GenerateRequest: the fields that map
// alone from the tables (schema.ts, options.ts), then the messages and tools. Ollama's history names
// no call ids: an assistant's calls get ids here, and a tool result answers the call its
// `tool_call_id` names, else the earliest unanswered call of its `tool_name`, else the earliest
// unanswered call.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  GenerateRequestSchema,
  Role,
  type ChatMessageSchema,
  type GenerateRequest,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../../base/errors.js";
import { contentOf, type ImageRef } from "../../core/media/parts.js";
import { newDraft, writeFields, type RequestDraft } from "../../fields/field-table.js";
import { toProtoRole } from "../../fields/roles.js";
import { OLLAMA_OPTION_FIELDS } from "./options.js";
import { OLLAMA_CHAT_FIELDS, OLLAMA_GENERATE_FIELDS, type OllamaChatBody, type OllamaGenerateBody } from "./schema.js";

type Message = NonNullable<OllamaChatBody["messages"]>[number];
type ChatMessageInit = MessageInitShape<typeof ChatMessageSchema>;
type Call = { readonly id: string; readonly name: string; answered: boolean };

function argumentsText(value: Record<string, unknown> | string | null | undefined): string {
  if (value == null) return "{}";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The tool call a result answers, marked answered; a 400 naming the message when there is none. */
function answeredCall(m: Message, index: number, calls: readonly Call[]): Call {
  const open = calls.filter((c) => !c.answered);
  const call =
    m.tool_call_id != null && m.tool_call_id !== ""
      ? calls.find((c) => c.id === m.tool_call_id)
      : (open.find((c) => c.name === m.tool_name) ?? open[0]);
  if (call === undefined) {
    throw new InvalidRequestError(`messages[${index}]: a tool result answers no tool call made earlier`, {
      param: `messages[${index}]`,
    });
  }
  call.answered = true;
  return call;
}

/** Base64 images before the text (core/media/); `at` is the images' path (`messages[0].images`). */
function withImages(
  text: string,
  images: readonly string[] | null | undefined,
  at: string,
): ReturnType<typeof contentOf> {
  const refs = (images ?? []).map(
    (data, k): ImageRef => ({
      source: { kind: "base64", data, mimeType: "" },
      part: `${at}[${k}]`,
      field: `${at}[${k}]`,
    }),
  );
  return refs.length === 0 ? { content: text } : contentOf(text === "" ? refs : [...refs, text]);
}

function toMessages(messages: readonly Message[]): ChatMessageInit[] {
  const calls: Call[] = [];
  return messages.map((m, index): ChatMessageInit => {
    const content = m.content ?? "";
    if (m.role === "tool") return { role: Role.TOOL, content, toolCallId: answeredCall(m, index, calls).id };
    if (m.role === "assistant" && (m.images ?? []).length > 0)
      throw new InvalidRequestError(`messages[${index}].images: images go in user messages only`, {
        param: `messages[${index}].images`,
      });
    const parts = withImages(content, m.images, `messages[${index}].images`);
    const toolCalls = (m.tool_calls ?? []).map((c, j) => {
      const call = { id: c.id ?? `call_${index}_${j}`, name: c.function.name, answered: false };
      calls.push(call);
      return { id: call.id, name: call.name, arguments: argumentsText(c.function.arguments) };
    });
    return { role: toProtoRole(m.role), ...parts, toolCalls, reasoning: m.thinking ?? "" };
  });
}

/** The fields of a table, then the options table's. */
function draftOf(table: Parameters<typeof writeFields>[0], body: object, options: object | null | undefined) {
  const draft = writeFields(table, body, newDraft());
  return options == null ? draft : writeFields(OLLAMA_OPTION_FIELDS, options, draft);
}

type Input = NonNullable<MessageInitShape<typeof GenerateRequestSchema>["input"]>;

function request(draft: RequestDraft, input: Input): GenerateRequest {
  return create(GenerateRequestSchema, { ...draft.request, sampling: draft.sampling, input });
}

export function chatToRequest(body: OllamaChatBody): GenerateRequest {
  const draft = draftOf(OLLAMA_CHAT_FIELDS, body, body.options);
  const tools = (body.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? "",
    parameters: t.function.parameters == null ? "" : JSON.stringify(t.function.parameters),
  }));
  const messages = toMessages(body.messages ?? []);
  return request(draft, { case: "chat", value: { ...draft.chat, messages, tools } });
}

export function generateToRequest(body: OllamaGenerateBody): GenerateRequest {
  const draft = draftOf(OLLAMA_GENERATE_FIELDS, body, body.options);
  const prompt = body.prompt ?? "";
  const hasImages = (body.images ?? []).length > 0;
  if (hasImages && (body.raw === true || (body.suffix ?? "") !== ""))
    throw new InvalidRequestError("'images' go with a templated prompt: not with 'raw' or 'suffix'", {
      param: "images",
    });
  if (body.suffix != null && body.suffix !== "")
    return request(draft, { case: "infill", value: { prefix: prompt, suffix: body.suffix } });
  if (body.raw === true) return request(draft, { case: "prompt", value: prompt });
  const system = body.system == null || body.system === "" ? [] : [{ role: Role.SYSTEM, content: body.system }];
  const messages = [...system, { role: Role.USER, ...withImages(prompt, body.images, "images") }];
  return request(draft, { case: "chat", value: { ...draft.chat, messages } });
}
