// Parties (b), (c), (d) and the sweep: the real sidecar (`startSidecar`) in its own process.
import { startSidecar } from "../../sidecar/server.js";
import { failToParent, serveParent } from "../ipc.js";
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
    engine: args.engine,
    sequences: args.sequences,
    contextSize: args.contextSize,
    maxQueue: args.maxQueue,
    queueTimeoutMs: 120_000,
    drainMs: 1_000,
    // As the sidecar's own entry (sidecar/main.ts) runs by default.
    priority: "auto",
  });
  exitOnSigterm(() => sidecar.stop());
  const loaded = sidecar.models[0];
  if (loaded === undefined) throw new Error("the sidecar loaded no model");
  serveParent(
    // The counters only: the prom-client registry beside them does not survive IPC's JSON.
    { metrics: async () => Object.fromEntries(Object.entries(sidecar.metrics).filter(([, value]) => typeof value === "number")) },
    { url: sidecar.url, buildType: loaded.llama.buildType, threads: loaded.threads, batchesOrdered: loaded.scheduler.active } satisfies SidecarReady,
  );
} catch (error) {
  failToParent(error);
}
