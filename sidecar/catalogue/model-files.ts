// The catalogue changed while the sidecar runs, and a model file read without loading it: PullModel (a remote
// model downloaded into the models folder, then catalogued under its file name), DeleteModel (a file of the
// models folder deleted and its model dropped) and DescribeModel (the GGUF header's metadata).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { readGgufFileInfo } from "node-llama-cpp";
import { errorText, failedPrecondition, invalidArgument, notFound } from "../engine/engine-errors.js";
import { nameOf, type CatalogueEntry } from "./model-catalogue.js";
import { isRemoteModel, knownFileName, resolveModelSource } from "./model-source.js";
import type { ModelRegistry } from "./registry.js";
import type { Loader } from "./loader.js";
import type { ModelView } from "./slot.js";
import { flatMetadata, type Metadata } from "./metadata.js";

/** One step of a pull: bytes in all and so far; the catalogued model at the end. */
export interface PullStep {
  readonly total: number;
  readonly completed: number;
  readonly model?: ModelView;
}

export interface ModelFiles {
  pull(source: string, alias: string, signal: AbortSignal): AsyncGenerator<PullStep>;
  delete(name: string): Promise<ModelView>;
  describe(name: string, verbose: boolean): Promise<{ metadata: Metadata; path: string }>;
}

/** Progress as it comes, the latest only: a slow reader skips steps, never falls behind. */
async function* downloadSteps(
  download: (onDownload: (done: number, total: number) => void) => Promise<string>,
): AsyncGenerator<PullStep, string> {
  let latest: PullStep = { total: 0, completed: 0 };
  let sent: PullStep | undefined;
  let wake = (): void => undefined;
  let finished = false;
  const file = download((completed, total) => {
    latest = { total, completed };
    wake();
  }).finally(() => {
    finished = true;
    wake();
  });
  file.catch(() => undefined); // awaited below
  while (!finished) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      if (finished || latest !== sent) resolve();
    });
    if (latest === sent || finished) continue;
    sent = latest;
    yield sent;
  }
  return file;
}

function pullFor(registry: ModelRegistry, loader: Loader) {
  return async function* pull(source: string, alias: string, signal: AbortSignal): AsyncGenerator<PullStep> {
    if (!isRemoteModel(source))
      throw invalidArgument(
        `"${source}" is not a model address: pull hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant> ` +
          "or an http(s) URL of a GGUF file",
      );
    const entry: CatalogueEntry = { name: nameOf(source), source, aliases: [], preset: {} };
    const file = yield* downloadSteps(async (onDownload) => {
      try {
        return await loader.resolve(entry, signal, onDownload);
      } catch (error) {
        if (signal.aborted) throw error;
        throw failedPrecondition(`the download of ${source} failed: ${errorText(error)}`);
      }
    });
    try {
      const header = await loader.read(file);
      const model = await catalogued(registry, file, alias);
      yield { total: header.fileBytes, completed: header.fileBytes, model };
    } catch (error) {
      if (registry.catalogue.entries.every((e) => e.source !== file)) await rm(file, { force: true });
      if (!(error instanceof ConnectError)) throw invalidArgument(`${source} is no usable model: ${errorText(error)}`);
      throw error;
    }
  };
}

/** The pulled file's model: the one already catalogued for it (`alias` added when free), else a new entry. */
function catalogued(registry: ModelRegistry, file: string, alias: string): ModelView | Promise<ModelView> {
  const name = nameOf(file);
  const held = registry.catalogue.entries.find((e) => path.resolve(e.source) === path.resolve(file));
  const aliases = alias === "" || alias === name ? [] : [alias];
  if (held !== undefined) return registry.view(held.name);
  return registry.add({ name, source: file, aliases, preset: {} });
}

/** The file a remote entry's download left in the models folder, if it names its file and that is there. */
function downloaded(entry: CatalogueEntry, folder: string): string | undefined {
  const name = knownFileName(entry.source);
  const file = name === undefined ? undefined : path.join(folder, name);
  return file !== undefined && existsSync(file) ? file : undefined;
}

export function modelFiles(registry: ModelRegistry, loader: Loader): ModelFiles {
  const entryOf = (name: string): CatalogueEntry => {
    const entry = registry.catalogue.find(name);
    if (entry === undefined) throw notFound(`model "${name}" is not in the catalogue`);
    return entry;
  };
  const fileOf = async (entry: CatalogueEntry): Promise<string | undefined> => {
    if (!isRemoteModel(entry.source)) return resolveModelSource(entry.source, { folder: loader.folder });
    return downloaded(entry, loader.folder);
  };
  return {
    pull: pullFor(registry, loader),
    async delete(name) {
      const entry = entryOf(name);
      const file = await fileOf(entry);
      const folder = path.resolve(loader.folder);
      if (file === undefined || path.dirname(path.resolve(file)) !== folder)
        throw failedPrecondition(`model "${entry.name}" has no file in the models folder: only those are deleted`);
      const view = await registry.remove(entry.name);
      await rm(file, { force: true });
      return view;
    },
    async describe(name, verbose) {
      const file = await fileOf(entryOf(name));
      if (file === undefined || !existsSync(file)) return { metadata: {}, path: "" };
      const info = await readGgufFileInfo(file, { readTensorInfo: false });
      return { metadata: flatMetadata(info.metadata, verbose), path: file };
    },
  };
}
