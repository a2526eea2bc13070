// Generation events → chat.completion.chunk frames (seed 000 / DESIGN §3), and the
// whole chat.completion for non-streaming requests.
//
// Stream order: role frame {"role":"assistant"} once, when `start` arrives; one
// content chunk per token with text (no role); the terminal chunk with `delta: {}`
// and finish_reason; a usage chunk with `choices: []` if stream_options.include_usage;
// `data: [DONE]`. A failure after `start` is one `event: error` and no [DONE].
// Chat has no blocks: each content kind is a field of `delta` (`content` today;
// `reasoning_content` and `tool_calls` with issue 4), chosen in `deltaOf`.
// Tokens with empty text (held back mid-character or as a possible stop sequence) are
// skipped, unless logprobs were requested: then every token gets a chunk (its content
// may be "") so that logprobs cover every generated token.
import type { Finish, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { collectBlocks, finishContent, tokenContent, type ContentDelta } from "../../content.js";
import type { ApiError } from "../../errors.js";
import type { GenerationResult } from "../../generation.js";
import type { ResponseMeta, StreamEncoder } from "../../serve.js";
import { DONE, jsonEvent, type SseEvent } from "../../sse/frame.js";
import { openAiErrorEvent } from "../openai-common/errors.js";
import { openAiFinishReason } from "../openai-common/finish-reason.js";
import { logprobValue, pieceBytes, pieceText } from "../openai-common/logprobs.js";
import { openAiUsage } from "../openai-common/usage.js";
import type { ChatRequest } from "./schema.js";

interface TokenLogprob {
  token: string;
  logprob: number | null;
  bytes: number[];
}

export interface ChatLogprobEntry extends TokenLogprob {
  top_logprobs: TokenLogprob[];
}

export function chatLogprobEntry(token: Token, topCount: number): ChatLogprobEntry {
  return {
    token: pieceText(token.piece),
    logprob: logprobValue(token.logprob),
    bytes: pieceBytes(token.piece),
    top_logprobs: token.topLogprobs.slice(0, topCount).map((alt) => ({
      token: pieceText(alt.piece),
      logprob: logprobValue(alt.logprob),
      bytes: pieceBytes(alt.piece),
    })),
  };
}

function wantsLogprobs(body: ChatRequest): boolean {
  return body.logprobs === true;
}

/** The chunk `delta` that carries one content delta. */
function deltaOf(content: ContentDelta): Record<string, string> {
  switch (content.kind) {
    case "text":
      return { content: content.text };
    default: {
      const unknownKind: never = content.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

export function createChatStreamEncoder(body: ChatRequest, meta: ResponseMeta): StreamEncoder {
  const logprobs = wantsLogprobs(body);
  const topCount = body.top_logprobs ?? 0;
  const chunk = (choices: unknown[], usage?: unknown): SseEvent =>
    jsonEvent({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      choices,
      ...(usage === undefined ? {} : { usage }),
    });
  const contentChunk = (content: ContentDelta) => chunk([{ index: 0, delta: deltaOf(content), finish_reason: null }]);
  return {
    start(_start: Start) {
      return [chunk([{ index: 0, delta: { role: "assistant" }, finish_reason: null }])];
    },
    token(token: Token) {
      if (!logprobs) return tokenContent(token).map(contentChunk);
      // With logprobs every token gets a chunk, even one whose text is held back.
      return [
        chunk([
          {
            index: 0,
            delta: { content: token.text },
            logprobs: { content: [chatLogprobEntry(token, topCount)], refusal: null },
            finish_reason: null,
          },
        ]),
      ];
    },
    finish(finish: Finish) {
      const reason = openAiFinishReason(finish.reason);
      if (reason === null) return [];
      // Text the sidecar held back to the end (a stop sequence that never came) goes out first.
      const frames = finishContent(finish).map(contentChunk);
      frames.push(chunk([{ index: 0, delta: {}, finish_reason: reason }]));
      if (body.stream_options?.include_usage === true) frames.push(chunk([], openAiUsage(finish)));
      frames.push(DONE);
      return frames;
    },
    fail(error: ApiError) {
      return [openAiErrorEvent(error)];
    },
  };
}

/** The message's `content`: its text blocks (the only kind today), joined. */
function messageContent(result: GenerationResult): string {
  let content = "";
  for (const block of collectBlocks(result)) {
    switch (block.kind) {
      case "text":
        content += block.text;
        break;
      default: {
        const unknownKind: never = block.kind;
        throw new Error(`unknown content kind ${String(unknownKind)}`);
      }
    }
  }
  return content;
}

export function encodeChatCompletion(body: ChatRequest, meta: ResponseMeta, result: GenerationResult): unknown {
  const topCount = body.top_logprobs ?? 0;
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: messageContent(result), refusal: null },
        logprobs: wantsLogprobs(body)
          ? { content: result.tokens.map((t) => chatLogprobEntry(t, topCount)), refusal: null }
          : null,
        finish_reason: openAiFinishReason(result.finish.reason) ?? "stop",
      },
    ],
    usage: openAiUsage(result.finish),
  };
}
