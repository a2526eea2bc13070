// The sidecar process: config, the model to serve (the demo model when none is given), a progress
// line, bind, SIGTERM drain.
import { getPriority } from "node:os";
import { ensureModels } from "../gguf/models.js";
import { readConfig, usage } from "./config.js";
import { describeGpu } from "./engine/llama/gpu.js";
import { isRemoteModel, modelsInFolder, resolveModelSource } from "./model-source.js";
import { startSidecar } from "./server.js";

/** The GGUF file to serve: MODEL resolved (a download shows its progress), else the demo model. */
async function modelToServe(model: string | undefined, folder: string): Promise<string> {
  const present = modelsInFolder(folder);
  if (present.length > 0) console.error(`sidecar: models in ${folder}: ${present.join(", ")} (MODEL=<name> serves one)`);
  if (model === undefined) {
    const demo = (await ensureModels(folder, ["demo"])).demo;
    console.error(`sidecar: no MODEL given, serving the embedded demo model (${demo}); run MODEL=/path/to/model.gguf npm start to serve a real one`);
    return demo;
  }
  return resolveShowingProgress(model, folder);
}

/** A path, a name in the models folder, or a remote model downloaded once (with a progress line). */
async function resolveShowingProgress(model: string, folder: string): Promise<string> {
  if (!isRemoteModel(model)) return resolveModelSource(model, { folder });
  let shown = -1;
  const path = await resolveModelSource(model, {
    folder,
    onDownload: (done, total) => {
      const percent = total > 0 ? Math.floor((done / total) * 100) : 0;
      if (percent === shown) return;
      shown = percent;
      process.stderr.write(`\rsidecar: downloading ${model} ${percent}% (${(done / 2 ** 20).toFixed(0)} of ${(total / 2 ** 20).toFixed(0)} MiB)`);
    },
  });
  if (shown !== -1) process.stderr.write("\n");
  console.error(`sidecar: ${model} is ${path}`);
  return path;
}

/** The sidecar process: config, model load with a progress line, bind, SIGTERM drain. */
async function main(): Promise<void> {
  if (process.argv.includes("--help")) {
    console.log(usage());
    return;
  }
  const config = readConfig(process.argv.slice(2), process.env);
  const model = await modelToServe(config.model, config.modelsDir ?? "models");
  const embeddingModel = config.embeddingModel === undefined ? undefined : await resolveShowingProgress(config.embeddingModel, config.modelsDir ?? "models");
  let lastShown = -1;
  const sidecar = await startSidecar({
    ...config,
    model,
    embeddingModel,
    onProgress: (fraction) => {
      const percent = Math.floor(fraction * 100);
      if (percent === lastShown) return;
      lastShown = percent;
      process.stderr.write(`\rsidecar: loading ${model} ${percent}%`);
    },
  });
  process.stderr.write("\n");
  const [first] = sidecar.models;
  if (first !== undefined) console.error(`sidecar: ${contextChoice(config.contextSize, first.contextSize, first.trainedContextSize)}`);
  console.error(
    `sidecar: serving ${first?.id} (${config.sequences} sequences × ${first?.contextSize} tokens, ${first?.threads} threads, ` +
      `${first?.threadsBatch} for batches of ${first?.batchThreadsFrom}+ tokens, ` +
      `${first?.llama.buildType} llama.cpp, flash attention ${first?.context.flashAttention === true ? "on" : "off"}, ` +
      `${first === undefined ? "" : describeGpu(first.gpu)}, nice ${getPriority()}) ` +
      `on ${sidecar.url} (native gRPC and gRPC-Web)`,
  );
  if (sidecar.metricsPort !== undefined)
    console.error(`sidecar: GET /metrics and /healthz without the token on http://${config.metricsHost}:${sidecar.metricsPort}`);
  if (first !== undefined && first.llama.buildType !== "localBuild" && first.llama.gpu === false) {
    console.error(
      "sidecar: on the prebuilt CPU library; `npm run build:engine` (once, about 5 minutes on 2 cores) builds a faster one for " +
        "this host (sidecar/native/README.md)",
    );
  }
  let signals = 0;
  const onSignal = (name: string): void => {
    signals++;
    if (signals > 1) process.exit(1);
    console.error(`sidecar: ${name}, draining (up to ${config.drainMs} ms)`);
    sidecar.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}

/** Says which context size was chosen, and why. */
function contextChoice(asked: number | "auto", chosen: number, trained: number): string {
  if (asked !== "auto") return `context: ${chosen} tokens per request (CONTEXT_SIZE; the model was trained with ${trained})`;
  if (chosen >= trained) return `context: ${chosen} tokens per request, the model's trained context (CONTEXT_SIZE=auto; set a number to use less memory)`;
  return (
    `context: ${chosen} tokens per request: the model was trained with ${trained}, but memory holds only this many for every ` +
    `sequence (CONTEXT_SIZE=auto; fewer --sequences leave more per request)`
  );
}

main().catch((error: unknown) => {
  console.error(`sidecar: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
