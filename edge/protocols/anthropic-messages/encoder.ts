// Generation events → Anthropic Messages stream events, and the whole Message for
// non-streaming requests.
//
// Stream order (named SSE events, `event:` equal to the data's `type`):
//   message_start      on the sidecar's `start`: the Message with empty content,
//                      null stop_reason, usage with the input counts
//   prompt_progress    with `return_progress`: one per progress event of the prompt's
//                      evaluation, {"type":"prompt_progress","prompt_progress":{total,
//                      cache, processed, time_ms}} (llama-server's counts), an event type
//                      of this server's that clients skip (docs/decisions.md)
//   per block          content_block_start → content_block_delta… → content_block_stop,
//                      one block open at a time, opened at its first non-empty delta:
//                      `thinking` (thinking_delta…, then a signature_delta before its stop;
//                      only when the request enables thinking), `text` (text_delta),
//                      `tool_use` (input_json_delta with argument fragments)
//   message_delta      stop_reason, stop_sequence, cumulative output_tokens
//   message_stop
// `ping` events fill silences (the keep-alive, see protocol.ts). A failure after
// message_start is one `event: error` ({"type":"error","error":{"type":"api_error",…}})
// and the stream ends: no message_delta, no message_stop.
import {
  FinishReason,
  type Finish,
  type Progress,
  type Start,
  type Token,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import {
  BlockSequencer,
  collectBlocks,
  finishContent,
  tokenContent,
  type Block,
  type ContentDelta,
} from "../../core/content.js";
import type { ApiError } from "../../base/errors.js";
import type { GenerationResult } from "../../upstream/generation.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";
import { promptProgress } from "../openai-common/llama-extras.js";
import { anthropicErrorEvent } from "./errors.js";
import { showsThinking, type MessagesRequest } from "./schema.js";
import { thinkingSignature } from "./signature.js";
import { anthropicFinish, type AnthropicStop } from "./finish.js";
import { anthropicUsage, type AnthropicUsage } from "./usage.js";

export type AnthropicContentBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** A call's arguments as the `input` object (the sidecar's grammar makes them a JSON object). */
function inputOf(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // An unfinished call (cut by max_tokens) has no complete input.
  }
  return {};
}

/**
 * The block a kind of content becomes: as `content_block_start` announces it (`whole` false:
 * empty) or as a Message holds it.
 */
function contentBlock(block: Block, whole: boolean): AnthropicContentBlock {
  switch (block.kind) {
    case "text":
      return { type: "text", text: whole ? block.text : "" };
    case "reasoning":
      return {
        type: "thinking",
        thinking: whole ? block.text : "",
        signature: whole ? thinkingSignature(block.text) : "",
      };
    case "tool_call":
      return {
        type: "tool_use",
        id: block.call?.id ?? "",
        name: block.call?.name ?? "",
        input: whole ? inputOf(block.text) : {},
      };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

type BlockDelta =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "input_json_delta"; partial_json: string };

/** The `delta` of a content_block_delta: its type matches the block's. */
function blockDelta(block: Block, text: string): BlockDelta {
  switch (block.kind) {
    case "text":
      return { type: "text_delta", text };
    case "reasoning":
      return { type: "thinking_delta", thinking: text };
    case "tool_call":
      return { type: "input_json_delta", partial_json: text };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** Reasoning is shown only when the request enables thinking; otherwise it is dropped (still counted). */
function shownBy(body: MessagesRequest): (delta: ContentDelta) => boolean {
  const thinking = showsThinking(body);
  return (delta) => thinking || delta.kind !== "reasoning";
}

interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStop["stop_reason"] | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

function message(
  meta: ResponseMeta,
  content: AnthropicContentBlock[],
  stop: AnthropicStop | null,
  usage: AnthropicUsage,
): AnthropicMessage {
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content,
    stop_reason: stop?.stop_reason ?? null,
    stop_sequence: stop?.stop_sequence ?? null,
    usage,
  };
}

/** A named event whose `event:` is the data's `type`. */
function event(data: { type: string } & Record<string, unknown>): SseEvent {
  return jsonEvent(data, data.type);
}

export function createMessagesStreamEncoder(body: MessagesRequest, meta: ResponseMeta): StreamEncoder {
  const shown = shownBy(body);
  let calledTools = false;
  const blocks = new BlockSequencer<SseEvent>({
    open: (block) => {
      if (block.kind === "tool_call") calledTools = true;
      return [event({ type: "content_block_start", index: block.index, content_block: contentBlock(block, false) })];
    },
    delta: (block, text) => [
      event({ type: "content_block_delta", index: block.index, delta: blockDelta(block, text) }),
    ],
    close: (block) => [
      ...(block.kind === "reasoning"
        ? [
            event({
              type: "content_block_delta",
              index: block.index,
              delta: { type: "signature_delta", signature: thinkingSignature(block.text) },
            }),
          ]
        : []),
      event({ type: "content_block_stop", index: block.index }),
    ],
  });
  return {
    start(start: Start) {
      return [event({ type: "message_start", message: message(meta, [], null, anthropicUsage(start, 0)) })];
    },
    progress(progress: Progress) {
      return [event({ type: "prompt_progress", prompt_progress: promptProgress(progress) })];
    },
    token(token: Token) {
      return blocks.pushAll(tokenContent(token).filter(shown));
    },
    finish(finish: Finish) {
      if (finish.reason === FinishReason.ABORT) return [];
      // Text the sidecar held back to the end goes out first, in its block.
      const last = [...blocks.pushAll(finishContent(finish).filter(shown)), ...blocks.close()];
      const stop = anthropicFinish(finish, calledTools);
      if (stop === null) return [];
      return [
        ...last,
        event({ type: "message_delta", delta: stop, usage: { output_tokens: finish.completionTokens } }),
        event({ type: "message_stop" }),
      ];
    },
    fail(error: ApiError) {
      return [anthropicErrorEvent(error)];
    },
  };
}

export function encodeMessage(body: MessagesRequest, meta: ResponseMeta, result: GenerationResult): AnthropicMessage {
  const blocks = collectBlocks(result, shownBy(body));
  const content = blocks.map((block) => contentBlock(block, true));
  const calledTools = blocks.some((block) => block.kind === "tool_call");
  const stop = anthropicFinish(result.finish, calledTools) ?? { stop_reason: "end_turn", stop_sequence: null };
  return message(meta, content, stop, anthropicUsage(result.finish, result.finish.completionTokens));
}
