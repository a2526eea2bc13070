// How a finished generation ends a Response: its `status` and `incomplete_details`.
import { FinishReason, type Finish } from "../../../proto/gen/inference/v1/inference_pb.js";

/** How a finished generation ends a Response. */
export type ResponsesEnding =
  | { status: "completed"; incomplete_details: null }
  | { status: "incomplete"; incomplete_details: { reason: "max_output_tokens" } };

/**
 * `completed`, or `incomplete` when the sidecar stopped at a token limit: LENGTH
 * (max_output_tokens) and CONTEXT_FULL both say `max_output_tokens`, the API's only token-limit
 * reason; null for ABORT (the client left: nothing more is sent).
 */
export function responsesFinish(finish: Finish): ResponsesEnding | null {
  switch (finish.reason) {
    case FinishReason.STOP:
    case FinishReason.TOOL_CALLS:
    case FinishReason.UNSPECIFIED: // a sidecar that sets no reason ended normally
      return { status: "completed", incomplete_details: null };
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT_FULL:
      return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
    case FinishReason.ABORT:
      return null;
    default: {
      const unknownReason: never = finish.reason;
      void unknownReason;
      return { status: "completed", incomplete_details: null };
    }
  }
}
