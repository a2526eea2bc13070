// llama-server's additions to the OpenAI shapes, on /v1/chat/completions and /v1/completions: `prompt_progress`
// chunks while a stream's prompt is evaluated (`return_progress`; the same object goes in every protocol's own progress
// frame), and `timings` on the last chunk of a choice and on a whole answer (`timings_per_token`; /infill sends the
// same `timings` always). docs/contract.md, "Prompt progress and timings".
import type { Finish, Progress } from "../../../proto/gen/inference/v1/inference_pb.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";

/** What a body asks of these (both fields are on the OpenAI tables: openai-common/fields.ts). */
export interface LlamaExtrasBody {
  readonly return_progress?: boolean | null | undefined;
  readonly timings_per_token?: boolean | null | undefined;
}

/** llama-server's `prompt_progress`, the object every protocol's progress frame carries. */
export function promptProgress(progress: Progress) {
  return {
    total: progress.total,
    cache: progress.cache,
    processed: progress.processed,
    time_ms: Math.round(progress.timeMs),
  };
}

/** `a` per `b`, 0 when `b` is 0 (llama-server's rates of nothing would be NaN or infinite, which JSON cannot carry). */
function per(a: number, b: number): number {
  return b > 0 ? a / b : 0;
}

/** llama-server's `timings` of a finished choice: prompt tokens evaluated (not cached), generated tokens, and rates. */
export function llamaTimings(finish: Finish) {
  const promptN = Math.max(0, finish.promptTokens - finish.cachedTokens);
  const promptMs = finish.timings?.promptMs ?? 0;
  const predictedN = finish.completionTokens;
  const predictedMs = finish.timings?.generationMs ?? 0;
  return {
    cache_n: finish.cachedTokens,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: per(promptMs, promptN),
    prompt_per_second: per(1000 * promptN, promptMs),
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: per(predictedMs, predictedN),
    predicted_per_second: per(1000 * predictedN, predictedMs),
  };
}

/** `frame` (a chunk's JSON) with the choice's `timings` added, when the body asked for them. */
export function withTimings(body: LlamaExtrasBody, frame: SseEvent, finish: Finish): SseEvent {
  if (body.timings_per_token !== true) return frame;
  return jsonEvent({ ...(JSON.parse(frame.data) as Record<string, unknown>), timings: llamaTimings(finish) });
}

/** The `timings` member of a whole answer: its first choice's, when the body asked for them. */
export function answerTimings(body: LlamaExtrasBody, finishes: readonly Finish[]) {
  const [first] = finishes;
  return body.timings_per_token === true && first !== undefined ? { timings: llamaTimings(first) } : {};
}
