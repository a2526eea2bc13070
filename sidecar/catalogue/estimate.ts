// What a model will take before it is loaded: node-llama-cpp's own estimate from the GGUF header
// (GgufInsights' V2 estimates: the weights at the GPU layers it gets, the context at its size and
// sequences), and a check that the file holds all its tensors. A model's embedding context is made on
// its first Embed call; from then on free memory shows it like any other allocation.
import { statSync } from "node:fs";
import { GgufInsights, readGgufFileInfo, type Llama } from "node-llama-cpp";
import { modelKind, type ModelKind } from "../engine/llama/ranking.js";
import type { Bytes } from "./budget.js";

/** A GGUF file's header, read once. */
export interface ModelFile {
  readonly insights: GgufInsights;
  readonly fileBytes: number;
}

/** The settings a load will use (the preset's, else the flags'). */
export interface EstimateSettings {
  readonly contextSize: number | "auto";
  readonly sequences: number;
  readonly gpuLayers: number | "auto" | "max";
  readonly flashAttention: boolean;
  /** The draft model's header (`draft` in the preset, `--model-draft`), counted with the model. */
  readonly draft?: ModelFile | undefined;
  /**
   * Its LoRA adapters' file sizes: each loaded with the model (its tensors in host memory) and served in a context of
   * its own, as large as the model's.
   */
  readonly adapters?: readonly number[] | undefined;
}

export interface Estimate {
  /** Weights and contexts. */
  readonly need: Bytes;
  /** The weights alone (memory-mapped: free memory does not show them). */
  readonly weights: Bytes;
  /** The context size estimated: the one asked, or for "auto" the largest that fits the room. */
  readonly contextSize: number;
  readonly gpuLayers: number;
  /** What the model is for (a ranking head makes it "rank"), known from the header. */
  readonly kind: ModelKind;
  /** The header's `general.architecture`. */
  readonly architecture: string;
}

/** Context sizes "auto" tries are multiples of this (llama.cpp pads to 256 as well). */
const CONTEXT_STEP = 256;

/**
 * The file's header and size; a file shorter than its header says (truncated, or not a model at
 * all) is refused here with that reason, before llama.cpp reads it.
 */
export async function readModelFile(llama: Llama, path: string): Promise<ModelFile> {
  const fileBytes = statSync(path).size;
  const info = await readGgufFileInfo(path);
  const insights = await GgufInsights.from(info, llama);
  const end = (info.infoEndOffset ?? 0) + insights.modelSize;
  if (fileBytes < end)
    throw new Error(
      `the file is truncated or corrupt: it holds ${fileBytes} bytes, its header promises at least ${end}`,
    );
  return { insights, fileBytes };
}

/** GPU layers as the load will resolve them: none on a CPU-only library, else node-llama-cpp's own choice. */
async function gpuLayersOf(file: ModelFile, llama: Llama, asked: EstimateSettings["gpuLayers"]): Promise<number> {
  const total = file.insights.totalLayers;
  if (llama.gpu === false) return 0;
  if (asked === "max") return total;
  if (typeof asked === "number") return Math.min(asked, total);
  return (await file.insights.configurationResolver.resolveModelGpuLayersV2("auto")).gpuLayers;
}

/**
 * Memory of the weights and of contexts of `contextSize` tokens per sequence (node-llama-cpp's estimate from the
 * header).
 */
async function needAt(
  file: ModelFile,
  settings: EstimateSettings,
  gpuLayers: number,
  contextSize: number,
): Promise<{ need: Bytes; weights: Bytes }> {
  const own = withAdapters(await needOf(file, settings, gpuLayers, contextSize), settings.adapters ?? []);
  if (settings.draft === undefined) return own;
  // A draft model: its weights at as many GPU layers as it has, and a context of the same size and sequences.
  const draft = await needOf(
    settings.draft,
    settings,
    Math.min(gpuLayers, settings.draft.insights.totalLayers),
    contextSize,
  );
  return { need: plus(own.need, draft.need), weights: plus(own.weights, draft.weights) };
}

const plus = (a: Bytes, b: Bytes): Bytes => ({ ram: a.ram + b.ram, vram: a.vram + b.vram });

/** The model's need with a context and the file's tensors per adapter (the weights are shared). */
function withAdapters(own: { need: Bytes; weights: Bytes }, adapters: readonly number[]) {
  const context = { ram: own.need.ram - own.weights.ram, vram: own.need.vram - own.weights.vram };
  let need = own.need;
  for (const bytes of adapters) need = plus(plus(need, context), { ram: bytes, vram: 0 });
  return { need, weights: own.weights };
}

async function needOf(
  file: ModelFile,
  settings: EstimateSettings,
  gpuLayers: number,
  contextSize: number,
): Promise<{ need: Bytes; weights: Bytes }> {
  const insights = file.insights;
  const model = await insights.estimateModelResourceRequirementsV2({ gpuLayers });
  const context = await insights.estimateContextResourceRequirementsV2({
    contextSize,
    sequences: settings.sequences,
    modelGpuLayers: gpuLayers,
    flashAttention: settings.flashAttention,
  });
  return {
    need: { ram: model.cpuRam + context.cpuRam, vram: model.gpuVram + context.gpuVram },
    weights: { ram: model.cpuRam, vram: model.gpuVram },
  };
}

/** The largest context ("auto": up to the trained one) whose estimate fits `room`; the smallest when none does. */
async function autoContextSize(
  file: ModelFile,
  settings: EstimateSettings,
  gpuLayers: number,
  room: Bytes,
): Promise<number> {
  const trained = file.insights.trainContextSize ?? CONTEXT_STEP;
  const fits = async (size: number): Promise<boolean> => {
    const { need } = await needAt(file, settings, gpuLayers, size);
    return need.ram <= room.ram && (need.vram === 0 || need.vram <= room.vram);
  };
  if (await fits(trained)) return trained;
  let [low, high] = [1, Math.floor(trained / CONTEXT_STEP)];
  if (high < 1 || !(await fits(CONTEXT_STEP))) return Math.min(trained, CONTEXT_STEP);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (await fits(middle * CONTEXT_STEP)) low = middle;
    else high = middle - 1;
  }
  return low * CONTEXT_STEP;
}

/** What the model will take with `settings`; an "auto" context is sized to `room` (the budget's room now). */
export async function estimate(
  file: ModelFile,
  llama: Llama,
  settings: EstimateSettings,
  room: Bytes,
): Promise<Estimate> {
  const gpuLayers = await gpuLayersOf(file, llama, settings.gpuLayers);
  const contextSize =
    settings.contextSize === "auto" ? await autoContextSize(file, settings, gpuLayers, room) : settings.contextSize;
  return {
    ...(await needAt(file, settings, gpuLayers, contextSize)),
    contextSize,
    gpuLayers,
    kind: modelKind(file.insights),
    architecture: String(file.insights.ggufFileInfo.metadata.general?.architecture ?? ""),
  };
}
