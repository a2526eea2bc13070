// Parties (b), (c), (d) and the sweep: the real sidecar (`startSidecar`) in its own process; with
// `catalogue`, a sidecar serving several models, none loaded at start (the many-models run).
import { startSidecar, type RunningSidecar } from "../../sidecar/start-sidecar.js";
import { buildCatalogue } from "../../sidecar/catalogue/model-catalogue.js";
import { loadLlama, threadCounts } from "../../sidecar/engine/llama/model.js";
import { failToParent, serveParent } from "../ipc.js";
import { describeGpu } from "../../sidecar/engine/llama/gpu.js";
import { argsOf, exitOnSigterm, type EngineArgs, type EngineReady } from "./args.js";

export interface SidecarReady extends EngineReady {
  readonly url: string;
}

/**
 * What the sidecar reports ready: its loaded model's library, threads and GPU; with none loaded, the library's and the
 * threads asked for.
 */
async function readyOf(sidecar: RunningSidecar, args: EngineArgs): Promise<SidecarReady> {
  const loaded = sidecar.models[0];
  if (loaded !== undefined) {
    return {
      url: sidecar.url,
      buildType: loaded.llama.buildType,
      threads: loaded.threads,
      threadsBatch: loaded.threadsBatch,
      gpu: describeGpu(loaded.gpu),
    };
  }
  if (args.catalogue === undefined) throw new Error("the sidecar loaded no model");
  // The process's one llama.cpp binding, which the sidecar loaded (sidecar/engine/llama/model.ts).
  const llama = await loadLlama(args.engine);
  return { url: sidecar.url, buildType: llama.buildType, ...threadCounts(args, llama) };
}

try {
  const args = argsOf<EngineArgs>();
  const sidecar = await startSidecar({
    model: args.modelPath,
    ...(args.catalogue
      ? { catalogue: buildCatalogue({ models: args.catalogue, folder: "models", serveFolder: false }) }
      : {}),
    modelId: undefined,
    host: "127.0.0.1",
    port: 0,
    threads: args.threads,
    threadsBatch: args.threadsBatch,
    engine: args.engine,
    sequences: args.sequences,
    contextSize: args.contextSize,
    maxQueue: args.maxQueue,
    cacheRam: args.cacheRam ?? 0,
    queueTimeoutMs: 120_000,
    drainMs: 1_000,
    // As the sidecar's own entry (sidecar/main.ts) runs by default.
    priority: "auto",
  });
  exitOnSigterm(() => sidecar.stop());
  serveParent(
    {
      // The counters only: the metrics object also holds prom-client's registry, which is cyclic.
      metrics: async () => {
        const { registry: _registry, ...counters } = sidecar.metrics;
        return { ...counters };
      },
    },
    await readyOf(sidecar, args),
  );
} catch (error) {
  failToParent(error);
}
