// llama-server's `stop_type` from the sidecar's finish: "eos" (the model ended the middle), "word"
// (a stop sequence), "limit" (n_predict, the context, n_indent or t_max_predict_ms), "none" (cut short).
import { type Finish, FinishReason } from "../../../proto/gen/inference/v1/inference_pb.js";

export type StopType = "eos" | "word" | "limit" | "none";

export function stopType(finish: Finish): StopType {
  switch (finish.reason) {
    case FinishReason.STOP:
    case FinishReason.UNSPECIFIED:
    case FinishReason.TOOL_CALLS:
      return finish.stopSequence === "" ? "eos" : "word";
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT_FULL:
      return "limit";
    case FinishReason.ABORT:
      return "none";
    default: {
      const unknownReason: never = finish.reason;
      void unknownReason;
      return "none";
    }
  }
}
