// Ollama's metrics on the last line (`done: true`), in nanoseconds: `total_duration` from the request's
// arrival to its end; `prompt_eval_duration` and `eval_duration` the sidecar's prompt and generation
// times; `load_duration` the rest but the queue (the model's load when it was not loaded, and
// transport). `prompt_eval_count` is the whole prompt (cached tokens included: what usage counts);
// `eval_count` the reply's tokens.
import type { Finish } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { ResponseMeta } from "../../core/endpoint.js";

export interface OllamaMetrics {
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
  prompt_eval_duration: number;
  eval_count: number;
  eval_duration: number;
}

const NS_PER_MS = 1e6;
const ns = (ms: number) => Math.max(0, Math.round(ms * NS_PER_MS));

export function ollamaMetrics(finish: Finish, meta: ResponseMeta): OllamaMetrics {
  const totalMs = meta.now() - (meta.startedMs ?? meta.created * 1000);
  const { promptMs = 0, generationMs = 0, queueMs = 0 } = finish.timings ?? {};
  return {
    total_duration: ns(totalMs),
    load_duration: ns(totalMs - promptMs - generationMs - queueMs),
    prompt_eval_count: finish.promptTokens,
    prompt_eval_duration: ns(promptMs),
    eval_count: finish.completionTokens,
    eval_duration: ns(generationMs),
  };
}

/** A line's `created_at`: RFC 3339, as Ollama writes it. */
export function createdAt(ms: number): string {
  return new Date(ms).toISOString();
}
