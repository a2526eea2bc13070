// Where the model to serve comes from: a GGUF path, a name in the models folder, or a remote model
// (`hf:<user>/<repo>/<file>.gguf`, `hf:<user>/<repo>:<quant>`, an `https://` URL) that
// node-llama-cpp's own resolver downloads into the models folder once — resuming an interrupted
// download — and serves from there afterwards. Hugging Face's address can be changed with
// HF_ENDPOINT (node-llama-cpp reads it). A `hf:<user>/<repo>[:<quant>]` address brings the projector its
// repository's manifest names (`mmprojFile`) too, saved beside the model as `mmproj-<model>.gguf`.
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

/** `hf:<user>/<repo>[:<tag>]`: an address Hugging Face's manifest resolves (no file named). */
const MANIFEST_ADDRESS = /^(?:hf|huggingface):([^/:\s]+)\/([^/:\s]+)(?::([^/:\s]+))?$/i;

/**
 * The projector of a model given as `hf:<user>/<repo>[:<tag>]`, as its repository's manifest names it (`mmprojFile`,
 * what Hugging Face answers llama.cpp's clients), downloaded once beside the model file as `mmproj-<model>.gguf`, the
 * name `projectorBeside` finds; undefined for other addresses and for a manifest that names none.
 */
export async function fetchProjectorOf(
  model: string,
  modelFile: string,
  options: ModelSourceOptions,
): Promise<string | undefined> {
  const address = MANIFEST_ADDRESS.exec(model);
  if (address === null) return undefined;
  const beside = projectorBeside(modelFile);
  if (beside !== undefined) return beside;
  const [, user = "", repo = "", tag = "latest"] = address;
  const file = await manifestProjector(user, repo, tag, options.signal);
  if (file === undefined) return undefined;
  const stem = path.basename(modelFile).replace(/\.gguf$/i, "");
  return resolveModelFile(`hf:${user}/${repo}/${file}`, {
    directory: path.dirname(modelFile),
    fileName: `mmproj-${stem}.gguf`,
    cli: false,
    deleteTempFileOnCancel: false,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

async function manifestProjector(
  user: string,
  repo: string,
  tag: string,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const endpoint = (process.env["HF_ENDPOINT"] ?? "https://huggingface.co/").replace(/\/?$/, "/");
  const url = `${endpoint}v2/${[user, repo].map(encodeURIComponent).join("/")}/manifests/${encodeURIComponent(tag)}`;
  const token = process.env["HF_TOKEN"];
  // The manifest names its files only to llama.cpp's user agent.
  const headers: Record<string, string> = { "user-agent": "llama-cpp" };
  if (token !== undefined && token !== "") headers["authorization"] = `Bearer ${token}`;
  const response = await fetch(url, { headers, ...(signal ? { signal } : {}) });
  if (!response.ok) return undefined;
  const manifest = (await response.json()) as { mmprojFile?: { rfilename?: unknown } };
  const file = manifest.mmprojFile?.rfilename;
  return typeof file === "string" && file.toLowerCase().endsWith(".gguf") ? file : undefined;
}
