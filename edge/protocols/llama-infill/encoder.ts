// Generation events → llama-server's /completion-shaped answer, as its /infill sends it.
//
// Stream: one `data:` event per token with text, `{"index":0,"content":…,"tokens":[],"stop":false,
// "tokens_predicted":n,"tokens_evaluated":p}`, then the final object with `"stop":true` and an empty
// `content` (the middle was in the events before it); no `[DONE]`. With `return_progress`, before the first of them
// one event per progress event of the prompt's evaluation: the same object with an empty `content` and
// llama-server's `prompt_progress` beside (as its /completion and /infill stream it). A failure after the start is
// `data: {"error":{…}}`. Whole answer: the final object with the whole middle in `content`.
import type { Finish, Progress, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { ApiError } from "../../base/errors.js";
import { finishContent } from "../../core/content.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { openAiErrorObject } from "../openai-common/errors.js";
import { llamaTimings, promptProgress } from "../openai-common/llama-extras.js";
import { stopType } from "./finish.js";
import type { InfillRequest } from "./schema.js";

/** The final object: `content` is the whole middle (empty on a stream), `tokens` its ids with `return_tokens`. */
function finalObject(
  body: InfillRequest,
  meta: ResponseMeta,
  finish: Finish,
  content: string,
  tokens: number[],
  index = 0,
) {
  return {
    index,
    content,
    tokens,
    stop: true,
    model: meta.model,
    tokens_predicted: finish.completionTokens,
    tokens_evaluated: finish.promptTokens,
    generation_settings: {
      n_predict: body.n_predict ?? -1,
      n_indent: body.n_indent ?? 0,
      t_max_predict_ms: body.t_max_predict_ms ?? -1,
      stream: body.stream === true,
    },
    has_new_line: content.includes("\n"),
    truncated: false,
    stop_type: stopType(finish),
    stopping_word: finish.stopSequence,
    tokens_cached: finish.promptTokens + finish.completionTokens,
    timings: llamaTimings(finish),
  };
}

export function createInfillStreamEncoder(body: InfillRequest, meta: ResponseMeta): StreamEncoder {
  let evaluated = 0;
  let predicted = 0;
  const partial = (content: string, tokens: number[], more?: Record<string, unknown>): SseEvent =>
    jsonEvent({
      index: 0,
      content,
      tokens,
      stop: false,
      tokens_predicted: predicted,
      tokens_evaluated: evaluated,
      ...more,
    });
  return {
    start(start: Start) {
      evaluated = start.promptTokens;
      return [];
    },
    progress(progress: Progress) {
      return [partial("", [], { prompt_progress: promptProgress(progress) })];
    },
    token(token: Token) {
      predicted++;
      if (token.text === "") return [];
      return [partial(token.text, body.return_tokens === true ? [token.id] : [])];
    },
    finish(finish: Finish) {
      const held = finishContent(finish)
        .filter((content) => content.kind === "text")
        .map((content) => partial(content.text, []));
      return [...held, jsonEvent(finalObject(body, meta, finish, "", []))];
    },
    fail(error: ApiError) {
      return [jsonEvent({ error: openAiErrorObject(error) })];
    },
  };
}

export function encodeInfill(body: InfillRequest, meta: ResponseMeta, result: GenerationResult): unknown {
  const tokens = body.return_tokens === true ? result.tokens.map((token) => token.id) : [];
  return finalObject(body, meta, result.finish, result.text, tokens);
}

/** Several middles (`n_cmpl`): an array of answers, in index order, as llama-server answers them. */
export function encodeInfillChoices(
  body: InfillRequest,
  meta: ResponseMeta,
  results: readonly GenerationResult[],
): unknown {
  return results.map((result, index) => {
    const tokens = body.return_tokens === true ? result.tokens.map((token) => token.id) : [];
    return finalObject(body, meta, result.finish, result.text, tokens, index);
  });
}
