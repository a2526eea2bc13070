// OpenAI's `finish_reason` from the sidecar's finish reason (chat and completions).
import { FinishReason } from "../../../proto/gen/inference/v1/inference_pb.js";

export type OpenAiFinishReason = "stop" | "length" | "tool_calls";

/**
 * The OpenAI finish_reason; null for ABORT (the client left: nothing more is sent).
 * "tool_calls" exactly when a call was actually sent (`calledTools`; docs/contract.md) and the reply
 * ended normally: a TOOL_CALLS finish without a call says "stop", and a reply that sent a call
 * and then ended for another normal reason (a stop sequence) still says "tool_calls", as OpenAI
 * does, so clients run the call. LENGTH and CONTEXT_FULL are both "length" (the API has one token-limit reason; the
 * last call
 * may be cut short).
 * Completions have no tools: they pass no `calledTools` and never say "tool_calls".
 */
export function openAiFinish(reason: FinishReason, calledTools = false): OpenAiFinishReason | null {
  switch (reason) {
    case FinishReason.TOOL_CALLS:
    case FinishReason.STOP:
    case FinishReason.UNSPECIFIED: // a sidecar that sets no reason ended normally
      return calledTools ? "tool_calls" : "stop";
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT_FULL:
      return "length";
    case FinishReason.ABORT:
      return null;
    default: {
      const unknownReason: never = reason;
      void unknownReason;
      return "stop";
    }
  }
}
