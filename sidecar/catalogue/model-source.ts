// Where the model to serve comes from: a GGUF path, a name in the models folder, or a remote model
// (`hf:<user>/<repo>/<file>.gguf`, `hf:<user>/<repo>:<quant>`, an `https://` URL) that
// node-llama-cpp's own resolver downloads into the models folder once — resuming an interrupted
// download — and serves from there afterwards. Hugging Face's address can be changed with
// HF_ENDPOINT (node-llama-cpp reads it).
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { resolveModelFile } from "node-llama-cpp";

/** Whether `model` names a remote model rather than a file. */
export function isRemoteModel(model: string): boolean {
  return /^(hf:|huggingface:|https?:\/\/)/i.test(model);
}

/** Whether a file name is a multimodal projector's (`mmproj….gguf`): a model's companion, never a model. */
export function isProjectorFile(file: string): boolean {
  return /^mmproj/i.test(path.basename(file));
}

/**
 * The projector beside a local model file, found by its name: `mmproj-<model file name>.gguf` (as the vision models'
 * projectors are published beside them); undefined when there is none.
 */
export function projectorBeside(modelFile: string): string | undefined {
  const stem = path.basename(modelFile).replace(/\.gguf$/i, "");
  const file = path.join(path.dirname(modelFile), `mmproj-${stem}.gguf`);
  return existsSync(file) ? file : undefined;
}

/** The GGUF files in the models folder, by name (the file name without `.gguf`); projectors are not models. */
export function modelsInFolder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((file) => file.toLowerCase().endsWith(".gguf") && !isProjectorFile(file))
    .map((file) => file.slice(0, -".gguf".length))
    .sort();
}

export interface ModelSourceOptions {
  /** The models folder: names are looked up there, downloads land there. */
  readonly folder: string;
  /** Bytes downloaded so far of a remote model, and its size. */
  readonly onDownload?: (downloaded: number, total: number) => void;
  readonly signal?: AbortSignal;
}

/**
 * The local GGUF path of `model`: a remote model is downloaded first (or found already there); a
 * bare name (no folder, no `.gguf`) is a file of the models folder; anything else is a path.
 */
export async function resolveModelSource(model: string, options: ModelSourceOptions): Promise<string> {
  if (isRemoteModel(model)) {
    const fileName = knownFileName(model);
    return resolveModelFile(model, {
      directory: options.folder,
      // A file name known beforehand finds an earlier download without asking the server.
      ...(fileName !== undefined ? { fileName } : {}),
      cli: false,
      deleteTempFileOnCancel: false,
      ...(options.onDownload
        ? {
            onProgress: ({ downloadedSize, totalSize }: { downloadedSize: number; totalSize: number }) =>
              options.onDownload?.(downloadedSize, totalSize),
          }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
  const named = path.join(options.folder, `${model}.gguf`);
  if (!model.includes("/") && !model.includes(path.sep) && !model.toLowerCase().endsWith(".gguf") && existsSync(named))
    return named;
  return model;
}

/** The file a remote model's address names, when it names one (`….gguf` at its end). */
export function knownFileName(model: string): string | undefined {
  const address = /^https?:\/\//i.test(model) ? new URL(model).pathname : model;
  const last = decodeURIComponent(address.split("/").at(-1) ?? "");
  return last.toLowerCase().endsWith(".gguf") && !last.includes(":") ? last : undefined;
}
