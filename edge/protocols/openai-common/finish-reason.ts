import { FinishReason } from "../../../proto/gen/inference/v1/inference_pb.js";

export type OpenAiFinishReason = "stop" | "length";

/** The OpenAI finish_reason; null for ABORT (the client left: nothing more is sent). */
export function openAiFinishReason(reason: FinishReason): OpenAiFinishReason | null {
  switch (reason) {
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
