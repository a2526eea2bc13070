import * as grpc from "@grpc/grpc-js";
import { setMaxListeners } from "node:events";
import type { SidecarConfig } from "./config.js";
import { unavailable } from "./engine/errors.js";
import { EngineMetrics } from "./engine/metrics.js";
import { loadModel, type LoadedModel } from "./engine/model.js";
import { applyPriority } from "./priority.js";
import { createInferenceService } from "./service.js";
import { addInferenceService } from "./transport/grpc-native.js";
import { grpcWebHandler, type PlainHandler } from "./transport/grpc-web.js";
import { listen } from "./transport/server.js";
import { connectTokenInterceptor, grpcTokenInterceptor, tokenCheck } from "./transport/token.js";

export interface RunningSidecar {
  readonly port: number;
  readonly url: string;
  readonly models: readonly LoadedModel[];
  readonly metrics: EngineMetrics;
  /** Refuses new work, lets streams in progress finish (up to the drain period), then closes. */
  stop(): Promise<void>;
}

export interface StartOptions extends Omit<SidecarConfig, "model"> {
  readonly model: string;
  readonly onProgress?: (fraction: number) => void;
}

export async function startSidecar(config: StartOptions): Promise<RunningSidecar> {
  const { model, modelId, host: _host, port: _port, drainMs: _drainMs, priority = "off", token, ...engine } = config;
  applyPriority(priority);
  const loaded = await loadModel({ ...engine, modelPath: model, ...(modelId !== undefined ? { id: modelId } : {}) });
  const models = [loaded];
  const metrics = new EngineMetrics();
  const shutdown = new AbortController();
  // Every call in progress listens for shutdown; there may be far more than Node's default of 10.
  setMaxListeners(0, shutdown.signal);
  const impl = createInferenceService({ models, metrics, draining: () => shutdown.signal.aborted });

  const authorized = tokenCheck(token);
  const grpcServer = new grpc.Server({ interceptors: [grpcTokenInterceptor(authorized)] });
  const health = addInferenceService(grpcServer, impl, shutdown.signal);
  const plain: PlainHandler = (request, response) => {
    const path = (request.url ?? "").split("?")[0];
    const reply = (status: number, type: string, body: string): void => {
      response.writeHead(status, { "content-type": type });
      response.end(body);
    };
    if (request.method === "GET" && path === "/metrics" && !authorized(request.headers.authorization)) {
      reply(401, "text/plain", "this sidecar needs its token: send 'authorization: Bearer <SIDECAR_TOKEN>'\n");
    } else if (request.method === "GET" && path === "/metrics") {
      const extra = { sidecar_sequences_busy: loaded.pool.busy, sidecar_queue_length: loaded.pool.queued };
      reply(200, "text/plain; version=0.0.4", metrics.render(extra));
    } else if (request.method === "GET" && path === "/healthz") {
      const ok = !shutdown.signal.aborted;
      reply(ok ? 200 : 503, "text/plain", ok ? "ok\n" : "draining\n");
    } else {
      reply(404, "text/plain", "not found\n");
    }
  };
  const http1 = grpcWebHandler(impl, shutdown.signal, plain, [connectTokenInterceptor(authorized)]);
  const listening = await listen(grpcServer, http1 as never, config.host, config.port);

  let stopping: Promise<void> | undefined;
  return {
    port: listening.port,
    url: `http://${config.host}:${listening.port}`,
    models,
    metrics,
    stop() {
      stopping ??= (async () => {
        health.setStatus("", "NOT_SERVING");
        health.setStatus("inference.v1.InferenceService", "NOT_SERVING");
        for (const m of models) m.pool.rejectWaiting(unavailable("the sidecar is shutting down"));
        const deadline = Date.now() + config.drainMs;
        const drained = (): boolean => metrics.generationsActive === 0;
        // Stop accepting new calls at once; calls in progress keep their connections.
        const closing = listening.close(config.drainMs);
        while (!drained() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        shutdown.abort();
        await closing;
        for (const m of models) await m.dispose();
      })();
      return stopping;
    },
  };
}
