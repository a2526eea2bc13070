// Generation events → Ollama's NDJSON lines, and the whole answer of `stream: false`. Each line is
// `{model, created_at, message: {role, content, thinking?, tool_calls?}, done: false}` for /api/chat
// (`response` and `thinking` at the top for /api/generate): one line per token with text or thinking,
// one line per tool call once its arguments are complete (Ollama sends calls whole, arguments an
// object). The last line has empty content, `done: true`, `done_reason` and the metrics (usage.ts).
// A failure after the first line is one `{"error": …}` line.
import type { Finish, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { BlockSequencer, collectBlocks, finishContent, tokenContent, type Block } from "../../core/content.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { ollamaErrorLine } from "./errors.js";
import { doneReason } from "./finish.js";
import { createdAt, ollamaMetrics } from "./usage.js";

/** Which route's shape: /api/chat's `message`, or /api/generate's `response`. */
export type OllamaShape = "chat" | "generate";

export interface OllamaToolCall {
  id: string;
  function: { index: number; name: string; arguments: unknown };
}

interface Part {
  readonly content?: string;
  readonly thinking?: string;
  readonly tool_calls?: OllamaToolCall[];
}

/** A call's arguments as Ollama sends them: an object (the text itself if a cut reply left it unparsable). */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text === "" ? "{}" : text);
  } catch {
    return text;
  }
}

function toolCallOf(block: Block): OllamaToolCall {
  const call = block.call ?? { index: 0, id: "", name: "" };
  return { id: call.id, function: { index: call.index, name: call.name, arguments: parsedArguments(block.text) } };
}

/** A part of the reply in the route's shape. */
function replyFields(shape: OllamaShape, part: Part): Record<string, unknown> {
  const thinking = part.thinking === undefined || part.thinking === "" ? {} : { thinking: part.thinking };
  if (shape === "generate") return { response: part.content ?? "", ...thinking };
  const calls = part.tool_calls === undefined || part.tool_calls.length === 0 ? {} : { tool_calls: part.tool_calls };
  return { message: { role: "assistant", content: part.content ?? "", ...thinking, ...calls } };
}

function line(model: string, meta: ResponseMeta, fields: Record<string, unknown>): SseEvent {
  return jsonEvent({ model, created_at: createdAt(meta.now()), ...fields, done: false });
}

/** The last line's (and a whole answer's) closing fields. */
function doneFields(finish: Finish, meta: ResponseMeta): Record<string, unknown> {
  return { done: true, done_reason: doneReason(finish.reason), ...ollamaMetrics(finish, meta) };
}

export function ollamaStreamEncoder(shape: OllamaShape, model: string, meta: ResponseMeta): StreamEncoder {
  const emit = (part: Part) => [line(model, meta, replyFields(shape, part))];
  const blocks = new BlockSequencer<SseEvent>({
    open: () => [],
    delta: (block, text) => {
      if (block.kind === "text") return emit({ content: text });
      return block.kind === "reasoning" ? emit({ thinking: text }) : [];
    },
    close: (block) => (block.kind === "tool_call" ? emit({ tool_calls: [toolCallOf(block)] }) : []),
  });
  return {
    start: () => [],
    token: (token: Token) => blocks.pushAll(tokenContent(token)),
    finish(finish: Finish) {
      const frames = [...blocks.pushAll(finishContent(finish)), ...blocks.close()];
      const last = { model, created_at: createdAt(meta.now()), ...replyFields(shape, {}), ...doneFields(finish, meta) };
      return [...frames, jsonEvent(last)];
    },
    fail: (error) => [ollamaErrorLine(error)],
  };
}

/** The whole answer of `stream: false`: the reply's parts joined, then the closing fields. */
export function ollamaResult(
  shape: OllamaShape,
  model: string,
  meta: ResponseMeta,
  result: GenerationResult,
): Record<string, unknown> {
  let content = "";
  let thinking = "";
  const calls: OllamaToolCall[] = [];
  for (const block of collectBlocks(result)) {
    if (block.kind === "text") content += block.text;
    else if (block.kind === "reasoning") thinking += block.text;
    else calls.push(toolCallOf(block));
  }
  const fields = replyFields(shape, { content, thinking, tool_calls: calls });
  return { model, created_at: createdAt(meta.now()), ...fields, ...doneFields(result.finish, meta) };
}
