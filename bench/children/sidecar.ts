// Parties (b), (c), (d) and the sweep: the real sidecar (`startSidecar`) in its own process.
import { startSidecar } from "../../sidecar/server.js";
import { failToParent, serveParent } from "../ipc.js";
import { describeGpu } from "../../sidecar/engine/llama/gpu.js";
import { argsOf, exitOnSigterm, type EngineArgs, type EngineReady } from "./args.js";

export interface SidecarReady extends EngineReady {
  readonly url: string;
}

try {
  const args = argsOf<EngineArgs>();
  const sidecar = await startSidecar({
    model: args.modelPath,
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
  const loaded = sidecar.models[0];
  if (loaded === undefined) throw new Error("the sidecar loaded no model");
  serveParent(
    {
      // The counters only: the metrics object also holds prom-client's registry, which is cyclic.
      metrics: async () => {
        const { registry: _registry, ...counters } = sidecar.metrics;
        return { ...counters };
      },
    },
    {
      url: sidecar.url,
      buildType: loaded.llama.buildType,
      threads: loaded.threads,
      threadsBatch: loaded.threadsBatch,
      gpu: describeGpu(loaded.gpu),
    } satisfies SidecarReady,
  );
} catch (error) {
  failToParent(error);
}
