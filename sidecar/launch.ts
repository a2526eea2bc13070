// The sidecar as its flags and environment describe it: the catalogue of models (the demo model when none is given), a
// progress line, the start lines with the catalogue, load and unload lines, and the drain on SIGTERM.
import { getPriority } from "node:os";
import { ensureModels } from "../gguf/models.js";
import { readConfig, type SidecarConfig } from "./config.js";
import { describeGpu } from "./engine/llama/gpu.js";
import { buildCatalogue, type Catalogue } from "./catalogue/model-catalogue.js";
import { isRemoteModel, modelsInFolder, resolveModelSource } from "./catalogue/model-source.js";
import { readPresets } from "./catalogue/presets.js";
import type { RegistryEvent } from "./catalogue/registry.js";
import { startSidecar, type RunningSidecar } from "./start-sidecar.js";

/** The catalogue the flags describe; with nothing given, the demo model alone (written if missing). */
async function catalogueFor(config: SidecarConfig): Promise<Catalogue> {
  const folder = config.modelsDir ?? "models";
  const presets = config.modelsPreset === undefined ? undefined : readPresets(config.modelsPreset);
  const sources = {
    models: config.models,
    modelId: config.modelId,
    folder,
    serveFolder: config.serveModelsDir ?? false,
    presets,
    defaultModel: config.defaultModel,
    modelDraft: config.modelDraft,
    mmproj: config.mmproj,
    lora: config.lora,
  };
  const given =
    config.models.length > 0 || sources.serveFolder || Object.values(presets ?? {}).some((p) => p.model !== undefined);
  if (!sources.serveFolder) {
    const present = modelsInFolder(folder);
    if (present.length > 0)
      console.error(
        `sidecar: models in ${folder}: ${present.join(", ")} (MODEL=<name> serves one; MODELS_DIR=${folder} serves ` +
          `them all)`,
      );
  }
  if (given) return buildCatalogue(sources);
  const demo = (await ensureModels(folder, ["demo"])).demo;
  console.error(
    `sidecar: no MODEL given, serving the embedded demo model (${demo}); run MODEL=/path/to/model.gguf npm start to ` +
      `serve a real one`,
  );
  return buildCatalogue({ ...sources, fallback: demo });
}

/** A download's progress on one line, redrawn as it goes. */
function downloadLine(model: string): (done: number, total: number) => void {
  let shown = -1;
  return (done, total) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 0;
    if (percent === shown) return;
    shown = percent;
    process.stderr.write(
      `\rsidecar: downloading ${model} ${percent}% (${(done / 2 ** 20).toFixed(0)} of ` +
        `${(total / 2 ** 20).toFixed(0)} MiB)`,
    );
    if (percent === 100) process.stderr.write("\n");
  };
}

/** A path, a name in the models folder, or a remote model downloaded once (with a progress line). */
async function resolveShowingProgress(model: string, folder: string): Promise<string> {
  if (!isRemoteModel(model)) return resolveModelSource(model, { folder });
  const path = await resolveModelSource(model, { folder, onDownload: downloadLine(model) });
  console.error(`sidecar: ${model} is ${path}`);
  return path;
}

/** One line per load, unload and failure once the sidecar serves (no request content, names only). */
function eventLine(event: RegistryEvent): string {
  switch (event.type) {
    case "loading":
      return `sidecar: loading ${event.model}`;
    case "loaded":
      return `sidecar: loaded ${event.model} in ${event.ms} ms (${event.replies})`;
    case "unloaded":
      return `sidecar: unloaded ${event.model} (${event.why})`;
    case "failed":
      return `sidecar: ${event.model} failed to load: ${event.reason}`;
  }
}

/** A started sidecar and the settings it was started with. */
export interface LaunchedSidecar {
  readonly config: SidecarConfig;
  readonly sidecar: RunningSidecar;
}

/**
 * The sidecar as its flags and environment describe it: the catalogue, loads at start with a progress line, the port,
 * and the start lines. Signals are the caller's (`drainOnSignals`).
 */
export async function launchSidecar(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<LaunchedSidecar> {
  const config = readConfig(argv, env);
  const catalogue = await catalogueFor(config);
  const folder = config.modelsDir ?? "models";
  const embeddingModel =
    config.embeddingModel === undefined ? undefined : await resolveShowingProgress(config.embeddingModel, folder);
  let started = false;
  const downloads = new Map<string, (done: number, total: number) => void>();
  const paths = new Map<string, string>();
  let lastShown = "";
  const sidecar = await startSidecar({
    ...config,
    catalogue,
    embeddingModel,
    onProgress: (fraction, model) => {
      const line = `\rsidecar: loading ${paths.get(model) ?? model} ${Math.floor(fraction * 100)}%`;
      if (started || line === lastShown) return;
      lastShown = line;
      process.stderr.write(line);
    },
    onEvent: (event) => {
      if (started || event.type === "failed") console.error(eventLine(event));
    },
    onDownload: (entry, done, total) => {
      if (!downloads.has(entry.name)) downloads.set(entry.name, downloadLine(entry.source));
      downloads.get(entry.name)?.(done, total);
    },
    onResolved: (entry, path) => {
      if (!paths.has(entry.name) && isRemoteModel(entry.source)) console.error(`sidecar: ${entry.source} is ${path}`);
      paths.set(entry.name, path);
    },
  });
  started = true;
  if (lastShown !== "") process.stderr.write("\n");
  startLines(config, sidecar);
  return { config, sidecar };
}

/** A model's LoRA adapters on the start line: ` with LoRA adapters a (scale 1), b (scale 0.5)`. */
const adaptersOf = (view: ReturnType<RunningSidecar["registry"]["list"]>[number]): string => {
  const adapters = view.entry.adapters ?? [];
  return adapters.length === 0
    ? ""
    : ` with LoRA adapters ${adapters.map((a) => `${a.name} (scale ${a.scale})`).join(", ")}`;
};

/** The catalogue (name, status), the first loaded model's settings, and where the sidecar listens. */
function startLines(config: SidecarConfig, sidecar: RunningSidecar): void {
  const views = sidecar.registry.list();
  const listed = views
    .map((v) => `${v.entry.name} (${v.status}${v.failure === "" ? "" : `: ${v.failure}`})${adaptersOf(v)}`)
    .join(", ");
  const keepAlive = views[0]?.keepAliveSeconds ?? -1;
  const policy =
    views.length > 1
      ? `; unloaded after ${keepAlive < 0 ? "never" : `${keepAlive} s idle`}, at most ${config.modelsMax} loaded`
      : "";
  console.error(`sidecar: catalogue of ${views.length}: ${listed}${policy}`);
  const [first] = sidecar.models;
  const where = `on ${sidecar.url} (native gRPC and gRPC-Web)`;
  if (first === undefined) {
    console.error(`sidecar: serving ${views.length} models, each loaded by its first request, ${where}`);
  } else {
    console.error(`sidecar: ${contextChoice(config.contextSize, first.contextSize, first.trainedContextSize)}`);
    console.error(
      `sidecar: serving ${first.id} (${first.pool.size} sequences × ${first.contextSize} tokens, ${first.threads} ` +
        `threads, ` +
        `${first.threadsBatch} for batches of ${first.batchThreadsFrom}+ tokens, ` +
        `${first.llama.buildType} llama.cpp, flash attention ` +
        `${first.context.flashAttention === true ? "on" : "off"}, ` +
        `${describeGpu(first.gpu)}, nice ${getPriority()}) ${where}`,
    );
  }
  if (sidecar.metricsPort !== undefined)
    console.error(
      `sidecar: GET /metrics and /healthz without the token on http://${config.metricsHost}:${sidecar.metricsPort}`,
    );
  if (sidecar.kvEvents !== undefined && config.kvEvents !== undefined)
    console.error(
      `sidecar: KV-cache events on ${sidecar.kvEvents.endpoint}, topics kv@${config.kvEvents.pod}@<model>, ` +
        `blocks of ${config.kvEvents.blockSize} tokens` +
        (sidecar.kvEvents.replayEndpoint === undefined ? "" : `, replay on ${sidecar.kvEvents.replayEndpoint}`),
    );
  if (first !== undefined && first.llama.buildType !== "localBuild" && first.llama.gpu === false) {
    console.error(
      "sidecar: on the prebuilt CPU library; `npm run build:engine` (once, about 5 minutes on 2 cores) builds a " +
        "faster one for " +
        "this host (sidecar/native/README.md)",
    );
  }
}

/** SIGTERM and SIGINT drain the sidecar (`before` first: what runs beside it), then exit; a second signal exits. */
export function drainOnSignals(config: SidecarConfig, sidecar: RunningSidecar, before?: () => Promise<void>): void {
  let signals = 0;
  const onSignal = (name: string): void => {
    signals++;
    if (signals > 1) process.exit(1);
    console.error(`sidecar: ${name}, draining (up to ${config.drainMs} ms)`);
    (before?.() ?? Promise.resolve())
      .then(() => sidecar.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}

/** Says which context size was chosen, and why. */
function contextChoice(asked: number | "auto", chosen: number, trained: number): string {
  if (asked !== "auto")
    return `context: ${chosen} tokens per request (CONTEXT_SIZE; the model was trained with ${trained})`;
  if (chosen >= trained)
    return (
      `context: ${chosen} tokens per request, the model's trained context (CONTEXT_SIZE=auto; set a number to ` +
      `use less memory)`
    );
  return (
    `context: ${chosen} tokens per request: the model was trained with ${trained}, but memory holds only this many ` +
    `for every ` +
    `sequence (CONTEXT_SIZE=auto; fewer --sequences leave more per request)`
  );
}
