// Generation events → text_completion frames, and the whole text_completion.
//
// Stream: one chunk per token with text (`logprobs: null` unless asked), then a
// chunk with `"text": ""` and finish_reason, then a usage chunk with `choices: []`
// if stream_options.include_usage, then `data: [DONE]`. With logprobs every token
// gets a chunk (its text may be ""), as in the chat encoder. A raw prompt's reply has
// one kind of content, text.
//
// `echo`: the prompt comes first, in the non-streaming text and as the stream's first chunk;
// with logprobs its tokens come first too (the sidecar's `start.prompt`: the first has a null
// logprob and no alternatives unless a beginning-of-sequence token predicts it).
//
// Legacy logprobs: `tokens` are the tokens' own texts (`bytes:\xNN…` for a piece that is
// not whole UTF-8), `text_offset` is where each token event's text starts, counted from
// the start of the prompt (as OpenAI counts: the completion follows the prompt, echoed or
// not), in UTF-16 code units, and each `top_logprobs`
// entry maps a token's key → logprob, one key per alternative (openai-common/logprobs.ts).
//
// `n` choices: each choice's chunks (its echo first) under its own `index`, interleaved as
// generated; one usage chunk and [DONE] after the last choice's (openai-common/choices.ts). In the
// whole answer each choice echoes the prompt and counts its text_offset from the prompt's end.
import type { Finish, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { finishContent } from "../../core/content.js";
import type { GenerationResult } from "../../upstream/generation.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { choicesStreamEncoder, openAiChunk, type ChoiceStream, type Chunk } from "../openai-common/choices.js";
import { openAiFinish } from "../openai-common/finish.js";
import { distinctKeys, logprobValue, pieceText } from "../openai-common/logprobs.js";
import { summedUsage } from "../openai-common/usage.js";
import { answerTimings } from "../openai-common/llama-extras.js";
import { logprobsCount, type CompletionRequest } from "./schema.js";

export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number | null> | null)[];
  text_offset: number[];
}

function emptyLogprobs(): LegacyLogprobs {
  return { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
}

function addToken(into: LegacyLogprobs, token: Token, count: number, offset: number): void {
  const alternatives = token.topLogprobs.slice(0, count);
  const keys = distinctKeys(alternatives);
  into.tokens.push(pieceText(token.piece));
  into.token_logprobs.push(logprobValue(token.logprob));
  into.top_logprobs.push(
    token.logprob === undefined
      ? null
      : Object.fromEntries(alternatives.map((alt, i) => [keys[i], logprobValue(alt.logprob)])),
  );
  into.text_offset.push(offset);
}

/** Adds `tokens` from `offset` on; returns the offset after them. */
function addTokens(into: LegacyLogprobs, tokens: readonly Token[], count: number, offset: number): number {
  let at = offset;
  for (const token of tokens) {
    addToken(into, token, count, at);
    at += token.text.length;
  }
  return at;
}

/** The echoed prompt's logprobs (its tokens from offset 0), or null without logprobs. */
function echoedLogprobs(start: Start, count: number | null): LegacyLogprobs | null {
  if (count === null) return null;
  const logprobs = emptyLogprobs();
  addTokens(logprobs, start.prompt, count, 0);
  return logprobs;
}

export function createCompletionStreamEncoder(body: CompletionRequest, meta: ResponseMeta): StreamEncoder {
  const chunk = openAiChunk(meta, "text_completion");
  const progressChoice = { text: "", index: 0, logprobs: null, finish_reason: null };
  return choicesStreamEncoder(body, chunk, (index) => completionChoiceStream(body, index, chunk), progressChoice);
}

/** The frames of choice `index`: the echoed prompt, its text chunks, its finish_reason chunk. */
function completionChoiceStream(body: CompletionRequest, index: number, chunk: Chunk): ChoiceStream {
  const count = logprobsCount(body);
  let offset = body.prompt.length;
  return {
    start(start: Start) {
      if (body.echo !== true) return [];
      return [chunk([{ text: body.prompt, index, logprobs: echoedLogprobs(start, count), finish_reason: null }])];
    },
    token(token: Token) {
      if (count === null && token.text === "") return [];
      let logprobs: LegacyLogprobs | null = null;
      if (count !== null) {
        logprobs = emptyLogprobs();
        addToken(logprobs, token, count, offset);
      }
      offset += token.text.length;
      return [chunk([{ text: token.text, index, logprobs, finish_reason: null }])];
    },
    finish(finish: Finish) {
      const reason = openAiFinish(finish.reason);
      if (reason === null) return undefined;
      // Text the sidecar held back to the end (a stop sequence that never came) goes out first.
      // A raw prompt has no reasoning or tool calls (the proto sends them for chats only): text alone.
      const frames = finishContent(finish)
        .filter((content) => content.kind === "text")
        .map((content) => chunk([{ text: content.text, index, logprobs: null, finish_reason: null }]));
      frames.push(chunk([{ text: "", index, logprobs: null, finish_reason: reason }]));
      return frames;
    },
  };
}

export function encodeCompletion(body: CompletionRequest, meta: ResponseMeta, result: GenerationResult): unknown {
  return encodeCompletionChoices(body, meta, [result]);
}

/** The whole text_completion of one or several choices (`n`), in index order. */
export function encodeCompletionChoices(
  body: CompletionRequest,
  meta: ResponseMeta,
  results: readonly GenerationResult[],
): unknown {
  return {
    id: meta.id,
    object: "text_completion",
    created: meta.created,
    model: meta.model,
    choices: results.map((result, index) => completionChoice(body, result, index)),
    usage: summedUsage(results.map((result) => result.finish)),
    ...answerTimings(
      body,
      results.map((result) => result.finish),
    ),
  };
}

function completionChoice(body: CompletionRequest, result: GenerationResult, index: number): unknown {
  const count = logprobsCount(body);
  const echo = body.echo === true;
  let logprobs: LegacyLogprobs | null = null;
  if (count !== null) {
    logprobs = (echo ? echoedLogprobs(result.start, count) : null) ?? emptyLogprobs();
    addTokens(logprobs, result.tokens, count, body.prompt.length);
  }
  return {
    text: echo ? body.prompt + result.text : result.text,
    index,
    logprobs,
    finish_reason: openAiFinish(result.finish.reason) ?? "stop",
  };
}
