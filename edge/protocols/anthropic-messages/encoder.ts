// Generation events → Anthropic Messages stream events, and the whole Message for
// non-streaming requests.
//
// Stream order (named SSE events, `event:` equal to the data's `type`):
//   message_start      on the sidecar's `start`: the Message with empty content,
//                      null stop_reason, usage with the input counts
//   per block          content_block_start → content_block_delta… → content_block_stop,
//                      one block open at a time, opened at its first non-empty delta
//   message_delta      stop_reason, stop_sequence, cumulative output_tokens
//   message_stop
// `ping` events fill silences (the keep-alive, see protocol.ts). A failure after
// message_start is one `event: error` ({"type":"error","error":{"type":"api_error",…}})
// and the stream ends: no message_delta, no message_stop.
import type { Finish, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { BlockSequencer, collectBlocks, finishContent, tokenContent, type Block } from "../../content.js";
import type { ApiError } from "../../errors.js";
import type { GenerationResult } from "../../generation.js";
import type { ResponseMeta, StreamEncoder } from "../../serve.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";
import { anthropicErrorEvent } from "./errors.js";
import type { MessagesRequest } from "./schema.js";
import { anthropicStop, type AnthropicStop } from "./stop-reason.js";
import { anthropicUsage, type AnthropicUsage } from "./usage.js";

export type AnthropicContentBlock = { type: "text"; text: string };

/** The block a kind of content becomes, as `content_block_start` announces it (empty) or a Message holds it. */
function contentBlock(block: Block, text: string): AnthropicContentBlock {
  switch (block.kind) {
    case "text":
      return { type: "text", text };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** The `delta` of a content_block_delta: its type matches the block's (text → text_delta). */
function blockDelta(block: Block, text: string): { type: "text_delta"; text: string } {
  switch (block.kind) {
    case "text":
      return { type: "text_delta", text };
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
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

function message(meta: ResponseMeta, content: AnthropicContentBlock[], stop: AnthropicStop | null, usage: AnthropicUsage): AnthropicMessage {
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
  const blocks = new BlockSequencer<SseEvent>({
    open: (block) => [event({ type: "content_block_start", index: block.index, content_block: contentBlock(block, "") })],
    delta: (block, text) => [event({ type: "content_block_delta", index: block.index, delta: blockDelta(block, text) })],
    close: (block) => [event({ type: "content_block_stop", index: block.index })],
  });
  return {
    start(start: Start) {
      return [event({ type: "message_start", message: message(meta, [], null, anthropicUsage(start, 0)) })];
    },
    token(token: Token) {
      return blocks.pushAll(tokenContent(token));
    },
    finish(finish: Finish) {
      const stop = anthropicStop(finish, body.max_tokens);
      if (stop === null) return [];
      return [
        // Text the sidecar held back to the end goes out first, in its block.
        ...blocks.pushAll(finishContent(finish)),
        ...blocks.close(),
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
  const content = collectBlocks(result).map((block) => contentBlock(block, block.text));
  const stop = anthropicStop(result.finish, body.max_tokens) ?? { stop_reason: "end_turn", stop_sequence: null };
  return message(meta, content, stop, anthropicUsage(result.finish, result.finish.completionTokens));
}
