// A sidecar's catalogue as the edge reads it (docs/contract.md, "Models"): each model's status by
// name, the names that reach a model (its id and its aliases), a model's sequences, and several
// sidecars' catalogues merged into one list, each id once with its best status.
import { ModelStatus, type ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";

/** A model's status as the API names it. */
export type ModelStatusName = "loaded" | "loading" | "available" | "failed";

/** Best first: where a request waits least (routing, and which entry a merged list keeps). */
export const STATUS_ORDER: readonly ModelStatusName[] = ["loaded", "loading", "available", "failed"];

/**
 * The status of `model`; a sidecar that reports none (UNSPECIFIED, older than catalogues) lists its loaded models only.
 */
export function statusName(model: ModelInfo): ModelStatusName {
  switch (model.status) {
    case ModelStatus.LOADING:
      return "loading";
    case ModelStatus.AVAILABLE:
      return "available";
    case ModelStatus.FAILED:
      return "failed";
    default:
      return "loaded";
  }
}

/** 0 for a loaded model, then loading, available, failed: lower is better. */
export function statusRank(model: ModelInfo): number {
  return STATUS_ORDER.indexOf(statusName(model));
}

/** Whether `name` reaches `model`: its id or one of its aliases. */
export function names(model: ModelInfo, name: string): boolean {
  return model.id === name || model.aliases.includes(name);
}

/** The model `name` reaches in `models` (an id first, then an alias), or undefined. */
export function findModel(models: readonly ModelInfo[], name: string): ModelInfo | undefined {
  return models.find((m) => m.id === name) ?? models.find((m) => m.aliases.includes(name));
}

/**
 * The sequences of the model `name` reaches in `models` (with one model catalogued, any name
 * reaches it), or undefined when no model is found or its count is decided at its load (0).
 */
export function sequencesOf(models: readonly ModelInfo[], name: string): number | undefined {
  const model = findModel(models, name) ?? (models.length === 1 ? models[0] : undefined);
  return model === undefined || model.sequences === 0 ? undefined : model.sequences;
}

/**
 * Several catalogues as one list: each id once, in the order ids first appear, the entry with the
 * best status (loaded > loading > available > failed; the earlier sidecar's among equals).
 */
export function mergeCatalogues(catalogues: readonly (readonly ModelInfo[])[]): ModelInfo[] {
  const byId = new Map<string, ModelInfo>();
  for (const model of catalogues.flat()) {
    const kept = byId.get(model.id);
    if (kept === undefined || statusRank(model) < statusRank(kept)) byId.set(model.id, model);
  }
  return [...byId.values()];
}
