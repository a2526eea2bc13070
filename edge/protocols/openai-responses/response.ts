// The Response object and its output items, as the Responses API shapes them. The
// same builder serves the non-streaming body and the `response` of every lifecycle
// event (created, in_progress, completed, incomplete, failed).
import { sealReasoning, wantsEncryptedReasoning } from "./encrypted-reasoning.js";
import type { Block } from "../../core/content.js";
import type { ResponseMeta } from "../../core/endpoint.js";
import type { ResponsesRequest } from "./schema.js";
import { echoedTools, ignoredTools, toolNamespaces } from "./tools.js";
import type { ResponsesUsage } from "./usage.js";

export type ItemStatus = "in_progress" | "completed" | "incomplete";
export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

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

export interface ReasoningTextPart {
  type: "reasoning_text";
  text: string;
}

/** The model's reasoning, as its text (no summary is made). */
export interface ReasoningItem {
  id: string;
  type: "reasoning";
  status: ItemStatus;
  summary: [];
  content: ReasoningTextPart[];
  /** The reasoning for the next turn of a stateless client (encrypted-reasoning.ts), when asked for. */
  encrypted_content?: string;
}

export interface FunctionCallItem {
  id: string;
  type: "function_call";
  status: ItemStatus;
  /** The sidecar's call id: what a function_call_output answers. */
  call_id: string;
  name: string;
  arguments: string;
  /** The namespace of a namespaced tool's call. */
  namespace?: string;
}

/**
 * The answer to a compaction: the model's summary, sealed (compaction/compaction-prompt.ts; docs/contract.md,
 * "Compaction").
 */
export interface CompactionItem {
  id: string;
  type: "compaction";
  encrypted_content: string;
}

export type OutputItem = MessageItem | ReasoningItem | FunctionCallItem | CompactionItem;

export function outputTextPart(text: string): OutputTextPart {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function reasoningTextPart(text: string): ReasoningTextPart {
  return { type: "reasoning_text", text };
}

/** The item id prefix of each block kind. */
export function itemIdPrefix(block: Block): string {
  switch (block.kind) {
    case "text":
      return "msg_";
    case "reasoning":
      return "rs_";
    case "tool_call":
      return "fc_";
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** What a request asks of its output items beyond their content. */
export interface ItemOptions {
  /** Reasoning items carry their encrypted_content (`include`). */
  readonly sealed: boolean;
  /** Calls of namespaced tools name their namespace (tools.ts). */
  readonly namespaces: ReadonlyMap<string, string>;
}

export function itemOptions(body: ResponsesRequest): ItemOptions {
  return { sealed: wantsEncryptedReasoning(body.include), namespaces: toolNamespaces(body.tools) };
}

/**
 * The output item a block becomes: as announced (`whole` false: no content yet) or with its text so
 * far.
 */
export function outputItem(
  block: Block,
  id: string,
  status: ItemStatus,
  whole: boolean,
  options?: ItemOptions,
): OutputItem {
  switch (block.kind) {
    case "text":
      return { id, type: "message", status, role: "assistant", content: whole ? [outputTextPart(block.text)] : [] };
    case "reasoning":
      return {
        id,
        type: "reasoning",
        status,
        summary: [],
        content: whole ? [reasoningTextPart(block.text)] : [],
        ...(whole && options?.sealed === true ? { encrypted_content: sealReasoning(block.text) } : {}),
      };
    case "tool_call":
      return {
        id,
        type: "function_call",
        status,
        call_id: block.call?.id ?? "",
        name: block.call?.name ?? "",
        arguments: whole ? block.text : "",
        ...namespaceOf(block.call?.name, options),
      };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

function namespaceOf(name: string | undefined, options: ItemOptions | undefined): { namespace?: string } {
  const namespace = name === undefined ? undefined : options?.namespaces.get(name);
  return namespace === undefined ? {} : { namespace };
}

/** Concatenated output_text of the message items (the SDKs' `output_text`). */
export function outputText(output: readonly OutputItem[]): string {
  return output.flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : [])).join("");
}

export interface ResponseState {
  status: ResponseStatus;
  /** Unix seconds when the response reached a terminal status; null before. */
  completed_at?: number | null;
  output: OutputItem[];
  error: { code: "server_error"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  usage: ResponsesUsage | null;
}

/** Tool types the request sent that this server ignored, said in the Response (absent when none). */
function warnings(body: ResponsesRequest): { warnings?: string[] } {
  const ignored = ignoredTools(body.tools);
  if (ignored.length === 0) return {};
  return {
    warnings: ignored.map((type) => `tools of type '${type}' are not supported by this server and were ignored`),
  };
}

/** The sampling in effect: what the request set, else the sidecar's defaults (proto SamplingOptions). */
const DEFAULT_TEMPERATURE = 1;
const DEFAULT_TOP_P = 0.95;

export function responseObject(
  body: ResponsesRequest,
  meta: ResponseMeta,
  state: ResponseState,
): Record<string, unknown> {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    completed_at: state.completed_at ?? null,
    status: state.status,
    error: state.error,
    incomplete_details: state.incomplete_details,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: meta.model,
    output: state.output,
    output_text: outputText(state.output),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    // Only where a stored request named one (edge/state/responses/conversation.ts).
    ...(body.conversation == null ? {} : { conversation: body.conversation }),
    // True only where the handler stored it (edge/state/responses/): a server without a store says false.
    store: body.store === true,
    background: body.background === true,
    service_tier: "default",
    temperature: body.temperature ?? DEFAULT_TEMPERATURE,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: echoedTools(body.tools),
    top_p: body.top_p ?? DEFAULT_TOP_P,
    presence_penalty: body.presence_penalty ?? 0,
    frequency_penalty: body.frequency_penalty ?? 0,
    top_logprobs: 0,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    max_tool_calls: body.max_tool_calls ?? null,
    user: body.user ?? null,
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    // Echoed when given (the transcripts of requests without it keep their shape).
    ...(body.prompt_cache_retention == null ? {} : { prompt_cache_retention: body.prompt_cache_retention }),
    truncation: body.truncation ?? "disabled",
    usage: state.usage,
    metadata: body.metadata ?? {},
    ...warnings(body),
  };
}
