// Responses usage from the sidecar's counts (the same counts chat's usage reports):
// input_tokens is the whole prompt, of which cached_tokens were found in the KV cache.
import type { Finish } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function responsesUsage(finish: Finish): ResponsesUsage {
  return {
    input_tokens: finish.promptTokens,
    input_tokens_details: { cached_tokens: finish.cachedTokens },
    output_tokens: finish.completionTokens,
    output_tokens_details: { reasoning_tokens: finish.reasoningTokens },
    total_tokens: finish.promptTokens + finish.completionTokens,
  };
}
