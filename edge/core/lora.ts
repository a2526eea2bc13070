// LoRA adapters seen from the edge (docs/contract.md, "LoRA adapters"): each is a model of its own name on the
// sidecars (ModelInfo.kind "lora", `parent` its base), so a request names one by `model` on every protocol;
// llama-server's `lora: [{id, scale}]` on chat and completions picks one too (`applyLora`), and GET/POST
// /lora-adapters list them and set their scales (llama-server's shape: an adapter's `id` is its place in the list,
// its name is accepted as well).
import type { GenerateRequest, ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../base/errors.js";
import type { Sidecar } from "../upstream/connection.js";

/** One entry of llama-server's `lora` field: an adapter by its place in GET /lora-adapters, or by its name. */
export interface LoraChoice {
  readonly id: number | string;
  readonly scale: number;
}

/** An adapter as GET /lora-adapters lists it. */
export interface LoraAdapterObject {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly scale: number;
  readonly parent: string;
}

/** The adapters of the sidecars' catalogues, in their order (each id once). */
export async function loraAdapters(sidecar: Sidecar, signal?: AbortSignal): Promise<ModelInfo[]> {
  const { models } = await sidecar.listModels({}, signal === undefined ? {} : { signal });
  return models.filter((m) => m.kind === "lora");
}

export const loraAdapterObjects = (adapters: readonly ModelInfo[]): LoraAdapterObject[] =>
  adapters.map((m, id) => ({ id, name: m.id, path: m.loraPath, scale: m.loraScale, parent: m.parent }));

/** The adapter a `lora` entry names (`field` names it in the 400). */
export function adapterOf(adapters: readonly ModelInfo[], id: number | string, field: string): ModelInfo {
  const found = typeof id === "number" ? adapters[id] : adapters.find((m) => m.id === id);
  if (found !== undefined) return found;
  const served = adapters.map((m, i) => `${i}: ${m.id}`).join(", ") || "none";
  throw new InvalidRequestError(`No LoRA adapter has the id ${JSON.stringify(id)} (served: ${served}).`, {
    param: field,
    code: "lora_not_found",
  });
}

/**
 * A request's `lora` field applied: the one adapter with a scale other than 0 becomes the request's model; all at 0,
 * the base model of the first. An adapter serves at the scale it is set to (POST /lora-adapters), so a request's
 * scale other than that, or two adapters at once, is a 400 naming the entry.
 */
export async function applyLora(
  sidecar: Sidecar,
  request: GenerateRequest,
  lora: readonly LoraChoice[] | null | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (lora == null || lora.length === 0) return;
  const adapters = await loraAdapters(sidecar, signal);
  const chosen = lora.map((entry, i) => ({ entry, i, adapter: adapterOf(adapters, entry.id, `lora[${i}].id`) }));
  const active = chosen.filter((c) => c.entry.scale !== 0);
  if (active.length > 1)
    throw new InvalidRequestError("One LoRA adapter serves a request: give the others a scale of 0.", {
      param: `lora[${active[1]?.i}].scale`,
    });
  const [on] = active;
  if (on === undefined) {
    request.model = chosen[0]?.adapter.parent ?? request.model;
    return;
  }
  if (Math.abs(on.entry.scale - on.adapter.loraScale) > 1e-6)
    throw new InvalidRequestError(
      `The LoRA adapter '${on.adapter.id}' serves at its scale ${on.adapter.loraScale} ` +
        "(POST /lora-adapters sets it; a request cannot change it).",
      { param: `lora[${on.i}].scale` },
    );
  request.model = on.adapter.id;
}
