// Sidecar ModelInfo → OpenAI model objects.
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface OpenAiModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** Tokens one request may use (prompt plus reply); not in OpenAI's own objects. */
  context_length: number;
}

export function openAiModel(model: ModelInfo): OpenAiModel {
  return {
    id: model.id,
    object: "model",
    created: Number(model.created),
    owned_by: "local",
    context_length: model.contextSize,
  };
}

export function openAiModelList(models: readonly ModelInfo[]): { object: "list"; data: OpenAiModel[] } {
  return { object: "list", data: models.map(openAiModel) };
}
