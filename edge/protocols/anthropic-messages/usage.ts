// Anthropic usage from the sidecar's counts. Anthropic counts the prompt in three
// parts (input_tokens + cache_creation_input_tokens + cache_read_input_tokens): the
// tokens the sidecar found in its KV cache are `cache_read_input_tokens`, those it
// evaluated up to the last cache_control breakpoint (`cache_written_tokens`) are
// `cache_creation_input_tokens`, the rest are `input_tokens` (docs/contract.md, "Cache hints").
import type { Finish, Start } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export function anthropicUsage(counts: Start | Finish, outputTokens: number): AnthropicUsage {
  return {
    input_tokens: counts.promptTokens - counts.cachedTokens - counts.cacheWrittenTokens,
    cache_creation_input_tokens: counts.cacheWrittenTokens,
    cache_read_input_tokens: counts.cachedTokens,
    output_tokens: outputTokens,
  };
}
