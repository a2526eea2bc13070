// A model's multimodal projector (`--mmproj`, `mmproj` in presets, or `mmproj-<model>.gguf` beside it), loaded with the
// model when the engine has the multimodal library (the local build's mtmd.patch): what the model reads besides text,
// or why it reads text only.
import type { Llama, LlamaModel } from "node-llama-cpp";
import { loadProjector, projectorSupport, type Projector } from "./multimodal.js";

/** What a model reads besides text, and its projector. */
export interface ModelMedia {
  readonly projector: Projector | undefined;
  /** "image", "audio" (ModelInfo.modalities); none without a projector. */
  readonly modalities: readonly string[];
  /** Why media is refused: no projector, or an engine without the multimodal library (how to get it). */
  readonly refusal: string | undefined;
}

/** Why a model without a projector refuses media (after `model "<id>" `). */
export const TEXT_ONLY = "reads text only (serve a multimodal model with its projector: --mmproj)";

/** The projector at `path` for `model`; a model without one reads text only. */
export async function modelMedia(
  llama: Llama,
  model: LlamaModel,
  path: string | undefined,
  threads: number,
): Promise<ModelMedia> {
  if (path === undefined) return { projector: undefined, modalities: [], refusal: TEXT_ONLY };
  const support = projectorSupport(llama);
  if (!support.available)
    return { projector: undefined, modalities: [], refusal: `cannot read media with this engine (${support.reason})` };
  const projector = await loadProjector(model, path, { threads });
  const modalities = [...(projector.supportsVision ? ["image"] : []), ...(projector.supportsAudio ? ["audio"] : [])];
  return { projector, modalities, refusal: undefined };
}
