// OpenAI's `usage` object from the sidecar's token counts (chat and completions).
import type { Finish } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  /** Of completion_tokens, those inside the reasoning segment: 0 without reasoning, as OpenAI's API says it. */
  completion_tokens_details: { reasoning_tokens: number };
}

export function openAiUsage(finish: Finish): OpenAiUsage {
  return {
    prompt_tokens: finish.promptTokens,
    completion_tokens: finish.completionTokens,
    total_tokens: finish.promptTokens + finish.completionTokens,
    prompt_tokens_details: { cached_tokens: finish.cachedTokens },
    completion_tokens_details: { reasoning_tokens: finish.reasoningTokens },
  };
}

/**
 * The usage of several choices of one prompt (`n`): the prompt once (every finish carries its
 * counts), the completion and reasoning tokens summed over the choices.
 */
export function summedUsage(finishes: readonly Finish[]): OpenAiUsage {
  const [first, ...others] = finishes;
  if (first === undefined) throw new Error("usage of no finish");
  if (others.length === 0) return openAiUsage(first);
  const completionTokens = finishes.reduce((sum, f) => sum + f.completionTokens, 0);
  const reasoningTokens = finishes.reduce((sum, f) => sum + f.reasoningTokens, 0);
  return openAiUsage({ ...first, completionTokens, reasoningTokens });
}
