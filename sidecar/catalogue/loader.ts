// The registry's work on this host (`Loader`, `hostLoader`): a catalogue entry's file resolved (a remote one
// downloaded at its first load), its header read once, its memory estimated with its preset over
// the flags, its load through node-llama-cpp, and the free memory the budget is measured against.
import { statSync } from "node:fs";
import os from "node:os";
import type { Llama } from "node-llama-cpp";
import type { Embedder } from "../engine/llama/embedder.js";
import {
  embedderFor,
  flashAttentionOf,
  loadModel,
  threadCounts,
  type LoadedModel,
  type ModelOptions,
} from "../engine/llama/model.js";
import type { Bytes } from "./budget.js";
import type { CatalogueEntry } from "./model-catalogue.js";
import { estimate, readModelFile, type Estimate, type EstimateSettings, type ModelFile } from "./estimate.js";
import { fetchProjectorOf, projectorBeside, resolveModelSource } from "./model-source.js";
import type { ModelLimits } from "./slot.js";

/** What the registry does on the host: the parts that touch files, memory and llama.cpp. */
export interface Loader {
  /** The models folder: names are looked up there, downloads land there. */
  readonly folder: string;
  /** The local GGUF of an entry (a remote one is downloaded now, once; `onDownload` sees its progress). */
  resolve(
    entry: CatalogueEntry,
    signal: AbortSignal,
    onDownload?: (done: number, total: number) => void,
  ): Promise<string>;
  /** The file's header, read once per path. */
  read(path: string): Promise<ModelFile>;
  /** What the entry will take; an "auto" context sized to `room`. */
  estimate(entry: CatalogueEntry, file: ModelFile, room: Bytes): Promise<Estimate>;
  load(
    entry: CatalogueEntry,
    path: string,
    estimate: Estimate,
    onProgress: (fraction: number) => void,
    signal: AbortSignal,
  ): Promise<LoadedModel>;
  /** Free and total memory now. */
  memory(): Promise<{ free: Bytes; total: Bytes }>;
  /** The settings the entry loads with (its preset over the flags). */
  limits(entry: CatalogueEntry): ModelLimits;
}

/** The engine settings every model shares (the flags), less what each load sets itself. */
export type SharedModelOptions = Omit<
  ModelOptions,
  "modelPath" | "id" | "onProgress" | "loadSignal" | "sharedEmbedder" | "embeddingModelPath"
>;

export interface HostLoaderOptions {
  readonly llama: Llama;
  readonly engine: SharedModelOptions;
  /** The models folder: names are looked up there, downloads land there. */
  readonly folder: string;
  /** The embedder every model shares (`--embedding-model`); none: each model embeds with itself. */
  readonly embedder?: Embedder | undefined;
  /** A remote model's download, bytes so far and in all. */
  readonly onDownload?: (entry: CatalogueEntry, done: number, total: number) => void;
  /** An entry's local file, once resolved (a remote one downloaded or found). */
  readonly onResolved?: (entry: CatalogueEntry, path: string) => void;
}

/** The flags' settings with the entry's preset over them. */
function settingsOf(engine: SharedModelOptions, entry: CatalogueEntry): SharedModelOptions {
  const { contextSize, sequences, gpuLayers, chatTemplate, specLookup, fimOrder } = entry.preset;
  return {
    ...engine,
    ...(contextSize !== undefined ? { contextSize } : {}),
    ...(sequences !== undefined ? { sequences } : {}),
    ...(gpuLayers !== undefined ? { gpuLayers } : {}),
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    ...(specLookup !== undefined ? { specLookup } : {}),
    ...(fimOrder !== undefined ? { fimOrder } : {}),
  };
}

/** What the estimate needs of the settings. */
function estimateSettings(llama: Llama, settings: SharedModelOptions): EstimateSettings {
  const asked = settings.contextSize;
  return {
    contextSize: typeof asked === "object" ? asked.max : asked,
    sequences: settings.sequences,
    gpuLayers: settings.gpuLayers ?? "auto",
    flashAttention: flashAttentionOf(settings.flashAttention ?? "auto", llama) === true,
  };
}

/**
 * Free and total host memory (what the kernel can hand out, page cache included), and GPU memory when there is a GPU.
 */
async function memoryOf(llama: Llama): Promise<{ free: Bytes; total: Bytes }> {
  const vram = llama.gpu === false ? { free: 0, total: 0 } : await llama.getVramState();
  return { free: { ram: os.freemem(), vram: vram.free }, total: { ram: os.totalmem(), vram: vram.total } };
}

/** Each file's header, read once per path; a file replaced since (a new download, a fixed copy) is read again. */
function headerReader(llama: Llama): (path: string) => Promise<ModelFile> {
  const files = new Map<string, Promise<ModelFile>>();
  return (path) => {
    const stat = statSync(path);
    const key = `${path}\0${stat.size}\0${stat.mtimeMs}`;
    let file = files.get(key);
    if (file === undefined) {
      file = readModelFile(llama, path);
      files.set(key, file);
      file.catch(() => files.delete(key));
    }
    return file;
  };
}

export function hostLoader(options: HostLoaderOptions): Loader {
  const read = headerReader(options.llama);
  /** A draft model's, a projector's or an adapter's local file (a remote one downloaded at its first use). */
  const draftPath = (source: string, signal?: AbortSignal): Promise<string> =>
    resolveModelSource(source, { folder: options.folder, ...(signal ? { signal } : {}) });
  return {
    folder: options.folder,
    async resolve(entry, signal, onDownload) {
      const path = await resolveModelSource(entry.source, {
        folder: options.folder,
        signal,
        ...(options.onDownload || onDownload
          ? {
              onDownload: (done: number, total: number) => {
                options.onDownload?.(entry, done, total);
                onDownload?.(done, total);
              },
            }
          : {}),
      });
      // A projector named by the model's repository comes with it (found beside it at load).
      if (entry.preset.mmproj === undefined)
        await fetchProjectorOf(entry.source, path, { folder: options.folder, ...(signal ? { signal } : {}) });
      options.onResolved?.(entry, path);
      return path;
    },
    read,
    async estimate(entry, file, room) {
      const settings = estimateSettings(options.llama, settingsOf(options.engine, entry));
      const draft = entry.preset.draft;
      const draftFile = draft === undefined ? undefined : await read(await draftPath(draft));
      const adapters = await Promise.all(
        (entry.adapters ?? []).map(async (a) => statSync(await draftPath(a.source)).size),
      );
      return estimate(file, options.llama, { ...settings, draft: draftFile, adapters }, room);
    },
    async load(entry, path, estimated, onProgress, signal) {
      const settings = settingsOf(options.engine, entry);
      const draft = entry.preset.draft;
      const mmproj = entry.preset.mmproj;
      const projectorPath = mmproj === undefined ? projectorBeside(path) : await draftPath(mmproj, signal);
      const lora = await Promise.all(
        (entry.adapters ?? []).map(async (a) => ({
          name: a.name,
          path: await draftPath(a.source, signal),
          scale: a.scale,
        })),
      );
      return loadModel({
        ...(draft !== undefined ? { draftModelPath: await draftPath(draft, signal) } : {}),
        ...(lora.length > 0 ? { lora } : {}),
        projectorPath,
        ...settings,
        // "auto" stays flexible, at most the size the budget was measured with.
        contextSize: settings.contextSize === "auto" ? { max: estimated.contextSize } : settings.contextSize,
        modelPath: path,
        id: entry.name,
        onProgress,
        loadSignal: signal,
        ...(options.embedder !== undefined ? { sharedEmbedder: options.embedder } : {}),
      });
    },
    memory: () => memoryOf(options.llama),
    limits(entry) {
      const { contextSize, sequences, maxQueue, queueTimeoutMs } = settingsOf(options.engine, entry);
      return {
        contextSize: typeof contextSize === "object" ? contextSize.max : contextSize,
        sequences,
        maxQueue,
        queueTimeoutMs,
      };
    },
  };
}

/** The embedder every catalogued model shares (`--embedding-model`): its model loaded once, at start. */
export interface SharedEmbedder {
  readonly embedder: Embedder;
  /** Its weights, memory-mapped: held outside the catalogue, counted against the budget. */
  readonly weights: Bytes;
  dispose(): Promise<void>;
}

export async function loadSharedEmbedder(
  llama: Llama,
  path: string,
  engine: SharedModelOptions,
): Promise<SharedEmbedder> {
  const model = await llama.loadModel({ modelPath: path, gpuLayers: engine.gpuLayers ?? "auto" });
  const embedder = embedderFor(model, { ...engine, threadsBatch: threadCounts(engine, llama).threadsBatch });
  return {
    embedder,
    weights: { ram: model.size, vram: 0 },
    async dispose() {
      await embedder.dispose();
      await model.dispose();
    },
  };
}
