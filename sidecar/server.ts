// `startSidecar`: loads the models, binds one port for native gRPC, gRPC-Web and the plain
// endpoints, and stops with a drain.
import * as grpc from "@grpc/grpc-js";
import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import type { SidecarConfig } from "./config.js";
import { unavailable } from "./engine/errors.js";
import { EngineMetrics } from "./engine/metrics.js";
import { loadModel, type LoadedModel } from "./engine/llama/model.js";
import { applyPriority } from "./priority.js";
import { DEFAULT_RESUMABLE, ResumableStreams } from "./engine/streams/resumable-streams.js";
import { createInferenceService } from "./service.js";
import { addInferenceService } from "./transport/grpc-native.js";
import { grpcWebHandler } from "./transport/grpc-web.js";
import { plainHandler } from "./transport/plain.js";
import { prometheusMetrics } from "./transport/prometheus.js";
import { listenMetrics } from "./transport/metrics-listener.js";
import { listen } from "./transport/server.js";
import { connectTokenInterceptor, grpcTokenInterceptor, tokenCheck } from "./transport/token.js";

/** A heartbeat after this much silence on a call (proto: Heartbeat). */
const DEFAULT_HEARTBEAT_MS = 5000;

export interface RunningSidecar {
  readonly port: number;
  readonly url: string;
  /** The port of --metrics-port (GET /metrics and /healthz without the token), when one is open. */
  readonly metricsPort: number | undefined;
  readonly models: readonly LoadedModel[];
  readonly metrics: EngineMetrics;
  /** Refuses new work, lets streams in progress finish (up to the drain period), then closes. */
  stop(): Promise<void>;
}

export interface StartOptions extends Omit<SidecarConfig, "model"> {
  readonly model: string;
  readonly onProgress?: (fraction: number) => void;
}

/** The Prometheus text of the engine's counters and the model's load (queue, sequences, KV cache). */
function modelMetrics(metrics: EngineMetrics, loaded: LoadedModel): ReturnType<typeof prometheusMetrics> {
  return prometheusMetrics(metrics, () => ({
    queued: loaded.pool.queued,
    running: loaded.pool.busy,
    kvCacheUsage: loaded.pool.heldTokens() / (loaded.pool.size * loaded.contextSize),
    kvTier: loaded.kvTier?.stats,
  }));
}

/** Applies the CPU priority, then loads the model with the engine's options: the config less the server's own settings. */
async function loadFromConfig(config: StartOptions): Promise<LoadedModel> {
  const {
    model,
    modelId,
    embeddingModel,
    host: _host,
    port: _port,
    drainMs: _drainMs,
    modelsDir: _modelsDir,
    priority = "off",
    token: _token,
    tlsCert: _tlsCert,
    tlsKey: _tlsKey,
    metricsPort: _metricsPort,
    metricsHost: _metricsHost,
    heartbeatMs: _heartbeatMs,
    resumable: _resumable,
    ...engine
  } = config;
  applyPriority(priority);
  return loadModel({
    ...engine,
    modelPath: model,
    ...(modelId !== undefined ? { id: modelId } : {}),
    ...(embeddingModel !== undefined ? { embeddingModelPath: embeddingModel } : {}),
  });
}

export async function startSidecar(config: StartOptions): Promise<RunningSidecar> {
  const { token, tlsCert, tlsKey, metricsPort, metricsHost = "127.0.0.1", heartbeatMs = DEFAULT_HEARTBEAT_MS, resumable = DEFAULT_RESUMABLE } = config;
  const loaded = await loadFromConfig(config);
  const models = [loaded];
  const metrics = new EngineMetrics();
  const shutdown = new AbortController();
  // Every call in progress listens for shutdown; there may be far more than Node's default of 10.
  setMaxListeners(0, shutdown.signal);
  const streams = new ResumableStreams(resumable);
  const impl = createInferenceService({ models, metrics, draining: () => shutdown.signal.aborted, heartbeatMs, streams });

  const authorized = tokenCheck(token);
  const grpcServer = new grpc.Server({ interceptors: [grpcTokenInterceptor(authorized)] });
  const health = addInferenceService(grpcServer, impl, shutdown.signal);
  const plainState = { metrics: modelMetrics(metrics, loaded), draining: () => shutdown.signal.aborted };
  const plain = plainHandler({ ...plainState, authorized });
  let serving = true;
  const http1 = grpcWebHandler(impl, shutdown.signal, plain, [connectTokenInterceptor(authorized)], () => serving);
  const tls = tlsCert !== undefined && tlsKey !== undefined ? { cert: readFileSync(tlsCert), key: readFileSync(tlsKey) } : undefined;
  const listening = await listen(grpcServer, http1 as never, config.host, config.port, tls);
  const metricsListening = metricsPort === undefined ? undefined : await listenMetrics(plainState, metricsHost, metricsPort);

  let stopping: Promise<void> | undefined;
  return {
    port: listening.port,
    url: `${tls === undefined ? "http" : "https"}://${config.host}:${listening.port}`,
    metricsPort: metricsListening?.port,
    models,
    metrics,
    stop() {
      stopping ??= (async () => {
        serving = false;
        health.setStatus("", "NOT_SERVING");
        health.setStatus("inference.v1.InferenceService", "NOT_SERVING");
        for (const m of models) m.pool.rejectWaiting(unavailable("the sidecar is shutting down"));
        const deadline = Date.now() + config.drainMs;
        const drained = (): boolean => metrics.generationsActive === 0;
        // Stop accepting new calls at once; calls in progress keep their connections.
        const closing = listening.close(config.drainMs);
        while (!drained() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        shutdown.abort();
        streams.cancelAll();
        await closing;
        listening.closeConnections();
        await metricsListening?.close();
        for (const m of models) await m.dispose();
      })();
      return stopping;
    },
  };
}
