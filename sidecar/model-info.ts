// What ListModels, LoadModel and UnloadModel say of one catalogued model (proto: ModelInfo): its
// status, its settings before a load, and everything about it once loaded.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ModelStatus, type ModelInfoSchema } from "../proto/gen/inference/v1/inference_pb.js";
import type { LoadedModel } from "./engine/llama/model.js";
import type { ModelView } from "./catalogue/slot.js";

type ModelInfo = MessageInitShape<typeof ModelInfoSchema>;

const STATUS: Record<ModelView["status"], ModelStatus> = {
  available: ModelStatus.AVAILABLE,
  loading: ModelStatus.LOADING,
  loaded: ModelStatus.LOADED,
  failed: ModelStatus.FAILED,
};

/** One model, loaded or not; `created` is when the catalogue was opened (Unix seconds). */
export function modelInfo(view: ModelView, created: number): ModelInfo {
  const need = view.estimate?.need;
  const base: ModelInfo = {
    id: view.entry.name,
    created: BigInt(created),
    status: STATUS[view.status],
    loadProgress: view.progress,
    failure: view.failure,
    memoryBytes: BigInt(need === undefined ? 0 : need.ram + need.vram),
    aliases: [...view.entry.aliases],
    fileBytes: BigInt(view.fileBytes),
    kind: view.estimate?.kind ?? "generate",
    architecture: view.estimate?.architecture ?? "",
    keepAliveSeconds: view.keepAliveSeconds,
    expiresAt: BigInt(Math.floor(view.expiresAt / 1000)),
    // What its load will use; 0: decided at the load.
    contextSize: view.limits.contextSize === "auto" ? 0 : view.limits.contextSize,
    sequences: view.limits.sequences,
    maxQueue: view.limits.maxQueue,
    queueTimeoutMs: view.limits.queueTimeoutMs,
  };
  return view.loaded === undefined ? base : { ...base, ...loadedInfo(view.loaded) };
}

/** The model and its LoRA adapters (each a model of its own name, kind "lora", whose `parent` is the model). */
export function modelInfos(view: ModelView, created: number): ModelInfo[] {
  return [modelInfo(view, created), ...(view.entry.adapters ?? []).map((a) => adapterInfo(view, a.name, created))];
}

/** What ListModels says of the model or adapter `name` (LoadModel, UnloadModel, SetLoraScale answer with it). */
export function modelInfoNamed(view: ModelView, name: string, created: number): ModelInfo {
  return view.entry.adapters?.some((a) => a.name === name) === true
    ? adapterInfo(view, name, created)
    : modelInfo(view, created);
}

/** An adapter of the model of `view`: the base's status and settings, its own sequences' load when loaded. */
function adapterInfo(view: ModelView, name: string, created: number): ModelInfo {
  const entry = view.entry.adapters?.find((a) => a.name === name);
  const loaded = view.loaded?.adapters.get(name);
  const base = { ...modelInfo({ ...view, loaded }, created), aliases: [] };
  return {
    ...base,
    id: name,
    kind: "lora",
    parent: view.entry.name,
    loraPath: entry?.source ?? "",
    loraScale: loaded?.lora?.scale ?? entry?.scale ?? 1,
  };
}

/** What a loaded model adds. */
function loadedInfo(m: LoadedModel): ModelInfo {
  return {
    contextSize: m.contextSize,
    sequences: m.pool.size,
    vocabularySize: m.vocabularySize,
    chatTemplate: m.chatWrapper.wrapperName,
    architecture: String(m.model.fileInfo.metadata.general.architecture ?? ""),
    engineBuild: m.llama.buildType,
    maxQueue: m.pool.limits.maxQueue,
    queueTimeoutMs: m.pool.limits.queueTimeoutMs,
    embeddingDimensions: m.embedder.dimensions,
    embeddingContextSize: m.embedder.contextSize,
    kind: m.kind,
    modalities: [...m.media.modalities],
    gpu: m.gpu.type,
    gpuDevices: [...m.gpu.devices],
    vramBytes: BigInt(m.gpu.vramBytes),
    gpuLayers: m.gpu.layersOffloaded,
    modelLayers: m.gpu.layers,
    // Batch requests give way to interactive ones: they are not load an edge routes by.
    active: m.pool.busy - m.pool.batchRunning.sequences,
    queued: m.pool.queued,
    toolCallSyntax: m.replySyntax.calls?.family ?? "",
    toolsRefused: m.replySyntax.refused ?? "",
    parallelToolCalls: m.replySyntax.calls?.parallel ?? false,
    reasoning: m.replySyntax.reasoning !== undefined,
    speculation: m.drafter?.kind ?? "",
    draftMax: m.drafter?.draftMax ?? 0,
    draftTokens: BigInt(m.drafter?.drafted ?? 0),
    draftAcceptedTokens: BigInt(m.drafter?.accepted ?? 0),
    fillInMiddle: m.fim?.order ?? "",
  };
}
