// Several choices of one request (`n`; proto: GenerateRequest.n) in chat and completions streams:
// one encoder per choice, frames in the order the sidecar's events come (choices interleave, as
// OpenAI's do), each choice's own finish_reason chunk, then once after the last choice's finish the
// usage chunk (when asked; completion tokens summed) and `[DONE]`. docs/contract.md, "Every stream".
import type { Finish, Progress, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { ServerError } from "../../base/errors.js";
import { DONE, jsonEvent, type SseEvent } from "../../sse/frame.js";
import { openAiErrorEvent } from "./errors.js";
import { promptProgress, withTimings, type LlamaExtrasBody } from "./llama-extras.js";
import { summedUsage } from "./usage.js";

/** One choice's frames. */
export interface ChoiceStream {
  start(start: Start): SseEvent[];
  token(token: Token): SseEvent[];
  /** Its held-back text and its finish_reason chunk; undefined when the client left (ABORT): nothing more is sent. */
  finish(finish: Finish): SseEvent[] | undefined;
}

/** A chunk of the stream: its choices, and usage when given, and more members (llama-server's `prompt_progress`). */
export type Chunk = (choices: unknown[], usage?: unknown, more?: Record<string, unknown>) => SseEvent;

/** The chunk function of a stream whose chunks are `object` ("chat.completion.chunk", "text_completion"). */
export function openAiChunk(meta: ResponseMeta, object: string): Chunk {
  return (choices, usage, more) =>
    jsonEvent({
      id: meta.id,
      object,
      created: meta.created,
      model: meta.model,
      choices,
      ...(usage === undefined ? {} : { usage }),
      ...more,
    });
}

/** How many choices a body asks for (`n`, 1 when absent). */
export function choiceCount(body: { readonly n?: number | null | undefined }): number {
  return body.n ?? 1;
}

/**
 * The stream of `body`'s choices: `choiceStream(index)` makes each choice's encoder. A progress event is a chunk of
 * its own, `progressChoice` its one choice and `prompt_progress` beside (llama-server's shape); with
 * `timings_per_token` each choice's finish_reason chunk (its last frame) carries its `timings`.
 */
export function choicesStreamEncoder(
  body: LlamaExtrasBody & {
    readonly n?: number | null | undefined;
    readonly stream_options?: { readonly include_usage?: boolean | null | undefined } | null | undefined;
  },
  chunk: Chunk,
  choiceStream: (index: number) => ChoiceStream,
  progressChoice?: unknown,
): StreamEncoder {
  const choices = Array.from({ length: choiceCount(body) }, (_, index) => choiceStream(index));
  const includeUsage = body.stream_options?.include_usage === true;
  const finishes: Finish[] = [];
  return {
    start: (start) => choices.flatMap((choice) => choice.start(start)),
    token: (token) => choiceAt(choices, token.choice).token(token),
    progress: (progress: Progress) =>
      progressChoice === undefined
        ? []
        : [chunk([progressChoice], undefined, { prompt_progress: promptProgress(progress) })],
    finish(finish) {
      const frames = choiceAt(choices, finish.choice).finish(finish);
      if (frames === undefined) return [];
      const last = frames.pop();
      if (last !== undefined) frames.push(withTimings(body, last, finish));
      finishes.push(finish);
      if (finishes.length < choices.length) return frames;
      if (includeUsage) frames.push(chunk([], summedUsage(finishes)));
      frames.push(DONE);
      return frames;
    },
    fail: (error) => [openAiErrorEvent(error)],
  };
}

function choiceAt<T>(choices: readonly T[], index: number): T {
  const choice = choices[index];
  if (choice === undefined)
    throw new ServerError(
      `The inference sidecar broke its protocol: an event of choice ${index} of ${choices.length}.`,
    );
  return choice;
}
