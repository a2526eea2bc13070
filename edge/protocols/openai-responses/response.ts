// The Response object and its output items, as the Responses API shapes them. The
// same builder serves the non-streaming body and the `response` of every lifecycle
// event (created, in_progress, completed, incomplete, failed).
import type { Block } from "../../content.js";
import type { ResponseMeta } from "../../serve.js";
import type { ResponsesRequest } from "./schema.js";
import type { ResponsesUsage } from "./usage.js";

export type ItemStatus = "in_progress" | "completed" | "incomplete";
export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: [];
  logprobs: [];
}

export interface MessageItem {
  id: string;
  type: "message";
  status: ItemStatus;
  role: "assistant";
  content: OutputTextPart[];
}

/** Output item kinds; reasoning and function_call items join with issue 4. */
export type OutputItem = MessageItem;

export function outputTextPart(text: string): OutputTextPart {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** The item id prefix of each block kind (`msg_` for messages). */
export function itemIdPrefix(block: Block): string {
  switch (block.kind) {
    case "text":
      return "msg_";
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** The output item a block becomes; `parts` are its content parts so far. */
export function outputItem(block: Block, id: string, status: ItemStatus, parts: OutputTextPart[]): OutputItem {
  switch (block.kind) {
    case "text":
      return { id, type: "message", status, role: "assistant", content: parts };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** Concatenated output_text of the message items (the SDKs' `output_text`). */
export function outputText(output: readonly OutputItem[]): string {
  return output
    .filter((item) => item.type === "message")
    .flatMap((item) => item.content.map((part) => part.text))
    .join("");
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  error: { code: "server_error"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  usage: ResponsesUsage | null;
}

export function responseObject(body: ResponsesRequest, meta: ResponseMeta, state: ResponseState): Record<string, unknown> {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status: state.status,
    error: state.error,
    incomplete_details: state.incomplete_details,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: meta.model,
    output: state.output,
    output_text: outputText(state.output),
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: body.top_p ?? null,
    truncation: "disabled",
    usage: state.usage,
    metadata: body.metadata ?? {},
  };
}
