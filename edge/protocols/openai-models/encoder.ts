// Sidecar ModelInfo → OpenAI model objects, with the catalogue's fields OpenAI's objects lack:
// where the model is (`status`), its context length, memory, aliases, kind and when an idle one
// is unloaded (docs/contract.md, "Models").
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";
import { statusName, type ModelStatusName } from "../../sidecars/catalogue.js";

export interface ModelStatusObject {
  value: ModelStatusName;
  /** While loading: how much of the file is loaded, 0..1 (to three decimals). */
  progress?: number;
  /** When failed: why its last load failed. */
  reason?: string;
}

export interface OpenAiModel {
  id: string;
  object: "model";
  /** When the model was loaded (Unix seconds); 0 for one never loaded. */
  created: number;
  owned_by: string;
  status: ModelStatusObject;
  /** Tokens one request may use (prompt plus reply); null for a model not loaded whose load decides it. */
  context_length: number | null;
  /** When loaded: the host and GPU memory it takes, in bytes (when the sidecar reports it). */
  memory_bytes?: number;
  /** Other names that reach it. */
  aliases: string[];
  /** "generate", "embed" or "rank". */
  kind: string;
  /** When loaded and idle: the Unix time (seconds) it will be unloaded at. */
  expires_at?: number;
}

function statusObject(model: ModelInfo): ModelStatusObject {
  const value = statusName(model);
  if (value === "loading") return { value, progress: Math.round(model.loadProgress * 1000) / 1000 };
  if (value === "failed") return { value, reason: model.failure };
  return { value };
}

export function openAiModel(model: ModelInfo): OpenAiModel {
  const status = statusObject(model);
  return {
    id: model.id,
    object: "model",
    created: Number(model.created),
    owned_by: "local",
    status,
    context_length: model.contextSize === 0 ? null : model.contextSize,
    ...(status.value === "loaded" && model.memoryBytes > 0n ? { memory_bytes: Number(model.memoryBytes) } : {}),
    aliases: [...model.aliases],
    // A sidecar older than catalogues reports no kind: its models generate.
    kind: model.kind === "" ? "generate" : model.kind,
    ...(model.expiresAt > 0n ? { expires_at: Number(model.expiresAt) } : {}),
  };
}

export function openAiModelList(models: readonly ModelInfo[]): { object: "list"; data: OpenAiModel[] } {
  return { object: "list", data: models.map(openAiModel) };
}
