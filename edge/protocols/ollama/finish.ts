// The sidecar's finish reason as Ollama's `done_reason`: a reply that ended with tool calls stopped
// ("stop", as Ollama says); a token limit and a full context both "length".
import { FinishReason } from "../../../proto/gen/inference/v1/inference_pb.js";

export function doneReason(reason: FinishReason): string {
  switch (reason) {
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT_FULL:
      return "length";
    default:
      return "stop";
  }
}
