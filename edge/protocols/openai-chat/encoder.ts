// Generation events → chat.completion.chunk frames (docs/contract.md, "Every stream"), and the
// whole chat.completion for non-streaming requests.
//
// Stream order: role frame {"role":"assistant"} once, when `start` arrives; one
// content chunk per token with text (no role); the terminal chunk with `delta: {}`
// and finish_reason; a usage chunk with `choices: []` if stream_options.include_usage;
// `data: [DONE]`. A failure after `start` is one `event: error` and no [DONE].
// Chat has no blocks: each content kind is a field of `delta` — `content`,
// `reasoning_content`, `tool_calls` — chosen in `ChatDeltas`. A tool call's first delta
// carries its index, id, type and name with empty arguments; later ones its index and
// argument fragments. finish_reason is "tool_calls" only if a call was sent.
// Tokens with nothing to send (held back mid-character or as a possible stop sequence) are
// skipped, unless logprobs were requested: then every token gets a chunk (its content
// may be "") so that logprobs cover every generated token. With `n` choices each has all of the
// above under its own `index` (a role frame each, first), interleaved as generated, and one usage
// chunk and [DONE] follow the last choice's terminal chunk (openai-common/choices.ts).
import type { Finish, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { collectBlocks, finishContent, tokenContent, type ContentDelta } from "../../core/content.js";
import type { GenerationResult } from "../../upstream/generation.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import type { SseEvent } from "../../sse/frame.js";
import { choicesStreamEncoder, openAiChunk, type ChoiceStream, type Chunk } from "../openai-common/choices.js";
import { openAiFinish } from "../openai-common/finish.js";
import { logprobValue, pieceBytes, pieceText } from "../openai-common/logprobs.js";
import { summedUsage } from "../openai-common/usage.js";
import { answerTimings } from "../openai-common/llama-extras.js";
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

/** Turns content deltas into chunk `delta`s, remembering which tool call argument text belongs to. */
class ChatDeltas {
  #call: number | undefined;
  calledTools = false;

  of(content: ContentDelta): Record<string, unknown>[] {
    switch (content.kind) {
      case "text":
        return [{ content: content.text }];
      case "reasoning":
        return [{ reasoning_content: content.text }];
      case "tool_call": {
        const out: Record<string, unknown>[] = [];
        if (content.call !== undefined) {
          const { index, id, name } = content.call;
          this.#call = index;
          this.calledTools = true;
          out.push({ tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }] });
        }
        if (content.text !== "" && this.#call !== undefined) {
          out.push({ tool_calls: [{ index: this.#call, function: { arguments: content.text } }] });
        }
        return out;
      }
      default: {
        const unknownKind: never = content;
        throw new Error(`unknown content kind ${JSON.stringify(unknownKind)}`);
      }
    }
  }
}

export function createChatStreamEncoder(body: ChatRequest, meta: ResponseMeta): StreamEncoder {
  const chunk = openAiChunk(meta, "chat.completion.chunk");
  const progressChoice = { index: 0, delta: { role: "assistant", content: null }, finish_reason: null };
  return choicesStreamEncoder(body, chunk, (index) => chatChoiceStream(body, index, chunk), progressChoice);
}

/** The frames of choice `index`: its role frame, its deltas, its finish_reason chunk. */
function chatChoiceStream(body: ChatRequest, index: number, chunk: Chunk): ChoiceStream {
  const logprobs = wantsLogprobs(body);
  const topCount = body.top_logprobs ?? 0;
  const deltas = new ChatDeltas();
  const contentChunks = (content: ContentDelta): SseEvent[] =>
    deltas.of(content).map((delta) => chunk([{ index, delta, finish_reason: null }]));
  return {
    start: () => [chunk([{ index, delta: { role: "assistant" }, finish_reason: null }])],
    token(token: Token) {
      const contents = tokenContent(token);
      if (!logprobs) return contents.flatMap(contentChunks);
      // With logprobs every token gets a chunk, even one whose text is held back; its
      // logprobs go on the token's first delta.
      const choices = contents.flatMap((content) => deltas.of(content));
      const [first = { content: "" }, ...rest] = choices;
      return [
        chunk([
          {
            index,
            delta: first,
            logprobs: { content: [chatLogprobEntry(token, topCount)], refusal: null },
            finish_reason: null,
          },
        ]),
        ...rest.map((delta) => chunk([{ index, delta, finish_reason: null }])),
      ];
    },
    finish(finish: Finish) {
      // Text the sidecar held back to the end (a stop sequence that never came) goes out first.
      const frames = finishContent(finish).flatMap(contentChunks);
      const reason = openAiFinish(finish.reason, deltas.calledTools);
      if (reason === null) return undefined;
      frames.push(chunk([{ index, delta: {}, finish_reason: reason }]));
      return frames;
    },
  };
}

interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The assistant message of a whole generation: text, reasoning and tool calls from its blocks. */
export function chatMessage(result: GenerationResult): { message: Record<string, unknown>; calledTools: boolean } {
  let content = "";
  let reasoning = "";
  const toolCalls: ChatToolCall[] = [];
  for (const block of collectBlocks(result)) {
    switch (block.kind) {
      case "text":
        content += block.text;
        break;
      case "reasoning":
        reasoning += block.text;
        break;
      case "tool_call":
        if (block.call !== undefined) {
          toolCalls.push({
            id: block.call.id,
            type: "function",
            function: { name: block.call.name, arguments: block.text },
          });
        }
        break;
      default: {
        const unknownKind: never = block.kind;
        throw new Error(`unknown content kind ${String(unknownKind)}`);
      }
    }
  }
  const message: Record<string, unknown> = {
    role: "assistant",
    // A reply that only calls tools has no content (null), as OpenAI sends it.
    content: content === "" && toolCalls.length > 0 ? null : content,
    refusal: null,
  };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return { message, calledTools: toolCalls.length > 0 };
}

export function encodeChatCompletion(body: ChatRequest, meta: ResponseMeta, result: GenerationResult): unknown {
  return encodeChatChoices(body, meta, [result]);
}

/** The whole chat.completion of one or several choices (`n`), in index order. */
export function encodeChatChoices(
  body: ChatRequest,
  meta: ResponseMeta,
  results: readonly GenerationResult[],
): unknown {
  const topCount = body.top_logprobs ?? 0;
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: results.map((result, index) => {
      const { message, calledTools } = chatMessage(result);
      return {
        index,
        message,
        logprobs: wantsLogprobs(body)
          ? { content: result.tokens.map((t) => chatLogprobEntry(t, topCount)), refusal: null }
          : null,
        finish_reason: openAiFinish(result.finish.reason, calledTools) ?? "stop",
      };
    }),
    usage: summedUsage(results.map((result) => result.finish)),
    ...answerTimings(
      body,
      results.map((result) => result.finish),
    ),
  };
}
