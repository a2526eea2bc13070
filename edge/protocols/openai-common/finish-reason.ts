import { FinishReason } from "../../../proto/gen/inference/v1/inference_pb.js";

export type OpenAiFinishReason = "stop" | "length" | "tool_calls";

/**
 * The OpenAI finish_reason; null for ABORT (the client left: nothing more is sent).
 * "tool_calls" only when a call was actually sent (`calledTools`; DESIGN §3).
 */
export function openAiFinishReason(reason: FinishReason, calledTools = false): OpenAiFinishReason | null {
  switch (reason) {
    case FinishReason.TOOL_CALLS:
      return calledTools ? "tool_calls" : "stop";
    case FinishReason.STOP:
    case FinishReason.UNSPECIFIED: // a sidecar that sets no reason ended normally
      return "stop";
    case FinishReason.LENGTH:
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
