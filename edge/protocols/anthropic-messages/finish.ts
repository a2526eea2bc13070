// Anthropic's `stop_reason` (and `stop_sequence`) from the sidecar's finish reason.
import { FinishReason, type Finish } from "../../../proto/gen/inference/v1/inference_pb.js";

export type AnthropicStopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "model_context_window_exceeded";

export interface AnthropicStop {
  stop_reason: AnthropicStopReason;
  /** The stop sequence that ended the reply, when one did. */
  stop_sequence: string | null;
}

/**
 * Anthropic's stop_reason for a finish; null for ABORT (the client left: nothing more is sent).
 * LENGTH is `max_tokens`, CONTEXT_FULL `model_context_window_exceeded`. "tool_use" only when a
 * tool_use block was sent (`calledTools`).
 */
export function anthropicFinish(finish: Finish, calledTools = false): AnthropicStop | null {
  switch (finish.reason) {
    case FinishReason.TOOL_CALLS:
      return { stop_reason: calledTools ? "tool_use" : "end_turn", stop_sequence: null };
    case FinishReason.STOP:
    case FinishReason.UNSPECIFIED: // a sidecar that sets no reason ended normally
      return finish.stopSequence !== ""
        ? { stop_reason: "stop_sequence", stop_sequence: finish.stopSequence }
        : { stop_reason: "end_turn", stop_sequence: null };
    case FinishReason.LENGTH:
      return { stop_reason: "max_tokens", stop_sequence: null };
    case FinishReason.CONTEXT_FULL:
      return { stop_reason: "model_context_window_exceeded", stop_sequence: null };
    case FinishReason.ABORT:
      return null;
    default: {
      const unknownReason: never = finish.reason;
      void unknownReason;
      return { stop_reason: "end_turn", stop_sequence: null };
    }
  }
}
