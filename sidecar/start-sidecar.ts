// `startSidecar`: opens the catalogue of models (loading what it must at start), binds one port for
// native gRPC, gRPC-Web and the plain endpoints, and stops with a drain.
import * as grpc from "@grpc/grpc-js";
import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConnectError, type Transport } from "@connectrpc/connect";
import type { SidecarConfig } from "./config.js";
import { unavailable } from "./engine/engine-errors.js";
import { EngineMetrics } from "./engine/engine-metrics.js";
import { loadLlama, type LoadedModel } from "./engine/llama/model.js";
import { buildCatalogue, type Catalogue, type CatalogueEntry } from "./catalogue/model-catalogue.js";
import {
  hostLoader,
  loadSharedEmbedder,
  type Loader,
  type SharedEmbedder,
  type SharedModelOptions,
} from "./catalogue/loader.js";
import { modelFiles } from "./catalogue/model-files.js";
import { isRemoteModel } from "./catalogue/model-source.js";
import { ModelRegistry, type RegistryEvent } from "./catalogue/registry.js";
import { applyPriority } from "./nice-value.js";
import { DEFAULT_RESUMABLE, ResumableStreams } from "./engine/streams/resumable-streams.js";
import { createInferenceService } from "./service.js";
import { startObserver } from "./trace/observe.js";
import { addInferenceService } from "./transport/grpc-native.js";
import { grpcWebHandler } from "./transport/grpc-web.js";
import { inProcessTransport } from "./transport/in-process.js";
import { plainHandler } from "./transport/plain.js";
import { modelLoads } from "./metrics/model-gauges.js";
import { prometheusMetrics } from "./metrics/prometheus.js";
import { listenMetrics } from "./metrics/metrics-port.js";
import { listen } from "./transport/shared-port.js";
import { KvEventPublisher } from "./kv-events/publisher.js";
import { connectTokenInterceptor, grpcTokenInterceptor, tokenCheck } from "./transport/token.js";

/** A heartbeat after this much silence on a call (proto: Heartbeat). */
const DEFAULT_HEARTBEAT_MS = 5000;
/** `--models-max` when none is given. */
const DEFAULT_MODELS_MAX = 3;

export interface RunningSidecar {
  readonly port: number;
  readonly url: string;
  /** The port of --metrics-port (GET /metrics and /healthz without the token), when one is open. */
  readonly metricsPort: number | undefined;
  /** The models loaded now, in catalogue order. */
  readonly models: readonly LoadedModel[];
  /** Every catalogued model and its state. */
  readonly registry: ModelRegistry;
  readonly metrics: EngineMetrics;
  /** The KV-cache events' publisher (`--kv-events`); undefined when off. */
  readonly kvEvents: KvEventPublisher | undefined;
  /** The service for a caller in this process (an edge beside it): no port, no encoding (transport/in-process.ts). */
  readonly transport: Transport;
  /** Refuses new work, lets streams in progress finish (up to the drain period), then closes. */
  stop(): Promise<void>;
}

export interface StartOptions
  extends Omit<SidecarConfig, "models" | "modelsPreset" | "defaultModel" | "serveModelsDir"> {
  /**
   * One GGUF file, the catalogue's only model (named by `modelId`, else its file name); unused when `catalogue` is
   * given.
   */
  readonly model?: string;
  /** The catalogue (main.ts builds it from the flags). */
  readonly catalogue?: Catalogue;
  /** Load progress of the models loaded at start, 0..1. */
  readonly onProgress?: (fraction: number, model: string) => void;
  /** Loads, unloads and failures (main.ts logs them). */
  readonly onEvent?: (event: RegistryEvent) => void;
  /** A remote model's download at its first load. */
  readonly onDownload?: (entry: CatalogueEntry, done: number, total: number) => void;
  /** An entry's local file, once resolved. */
  readonly onResolved?: (entry: CatalogueEntry, path: string) => void;
}

/** The engine's options every model shares: the config less the server's and the catalogue's own settings. */
function sharedOptions(config: StartOptions): SharedModelOptions {
  const {
    model: _model,
    catalogue: _catalogue,
    modelId: _modelId,
    embeddingModel: _embeddingModel,
    modelDraft: _modelDraft,
    mmproj: _mmproj,
    lora: _lora,
    host: _host,
    port: _port,
    drainMs: _drainMs,
    modelsDir: _modelsDir,
    priority: _priority,
    token: _token,
    tlsCert: _tlsCert,
    tlsKey: _tlsKey,
    metricsPort: _metricsPort,
    metricsHost: _metricsHost,
    heartbeatMs: _heartbeatMs,
    resumable: _resumable,
    kvEvents: _kvEvents,
    keepAliveSeconds: _keepAlive,
    modelsMax: _modelsMax,
    preload: _preload,
    onProgress: _onProgress,
    onEvent: _onEvent,
    onDownload: _onDownload,
    onResolved: _onResolved,
    ...engine
  } = config;
  return engine;
}

/** The name of the catalogue's first model (the topic of the KV-cache events' first batch). */
function firstModelName(config: StartOptions): string {
  const entry = config.catalogue?.entries[0];
  if (entry !== undefined) return entry.name;
  return config.modelId ?? path.basename(config.model ?? "model").replace(/\.gguf$/i, "");
}

/** The catalogue, the shared embedder and the registry; the models loaded at start are loaded. */
async function openRegistry(
  config: StartOptions,
  publisher: KvEventPublisher | undefined,
): Promise<{ registry: ModelRegistry; shared: SharedEmbedder | undefined; loader: Loader }> {
  applyPriority(config.priority ?? "off");
  const llama = await loadLlama(config.engine, config.gpu);
  const engine = { ...sharedOptions(config), ...(publisher === undefined ? {} : { kvBlocks: publisher.option }) };
  const folder = config.modelsDir ?? "models";
  const catalogue =
    config.catalogue ??
    buildCatalogue({
      models: config.model === undefined ? [] : [config.model],
      modelId: config.modelId,
      folder,
      serveFolder: false,
      modelDraft: config.modelDraft,
      mmproj: config.mmproj,
      lora: config.lora,
    });
  const shared =
    config.embeddingModel === undefined ? undefined : await loadSharedEmbedder(llama, config.embeddingModel, engine);
  const loader = hostLoader({
    llama,
    engine,
    folder,
    embedder: shared?.embedder,
    ...(config.onDownload ? { onDownload: config.onDownload } : {}),
    ...(config.onResolved ? { onResolved: config.onResolved } : {}),
  });
  const registry = new ModelRegistry({
    catalogue,
    loader,
    keepAliveSeconds: config.keepAliveSeconds,
    maxModels: config.modelsMax ?? DEFAULT_MODELS_MAX,
    ...(shared ? { reserved: shared.weights } : {}),
    ...(config.onEvent ? { onEvent: config.onEvent } : {}),
    ...(config.onProgress
      ? { onProgress: (model: string, fraction: number) => config.onProgress?.(fraction, model) }
      : {}),
  });
  await loadAtStart(registry, config.preload ?? []);
  return { registry, shared, loader };
}

/**
 * With one model in the catalogue, it is loaded now and a failure stops the start (as a sidecar
 * serving one model always did); `--preload` names are loaded in turn, a failure left in their status.
 */
async function loadAtStart(registry: ModelRegistry, preload: readonly string[]): Promise<void> {
  const unknown = preload.find((name) => registry.catalogue.find(name) === undefined);
  if (unknown !== undefined)
    throw new Error(`--preload ${unknown} is not in the catalogue (${registry.catalogue.names()})`);
  const [only, ...others] = registry.catalogue.entries;
  if (only !== undefined && others.length === 0) {
    await registry.load(only.name).catch(async (error: unknown) => {
      await registry.close();
      throw new Error(error instanceof ConnectError ? error.rawMessage : String(error));
    });
  }
  await registry.preload(preload);
}

/** The start of a shutdown: health says NOT_SERVING, no model loads, and every waiting call is refused. */
function refuseNewWork(health: ReturnType<typeof addInferenceService>, registry: ModelRegistry): void {
  health.setStatus("", "NOT_SERVING");
  health.setStatus("inference.v1.InferenceService", "NOT_SERVING");
  registry.beginDrain();
  for (const m of registry.loaded()) m.pool.rejectWaiting(unavailable("the sidecar is shutting down"));
}

/**
 * The KV-cache events' publisher, opened before any model loads (a model loaded at start reports what its KV tier
 * holds), then the registry.
 */
async function openModels(
  config: StartOptions,
): Promise<Awaited<ReturnType<typeof openRegistry>> & { kvEvents: KvEventPublisher | undefined }> {
  const kvEvents =
    config.kvEvents === undefined ? undefined : await KvEventPublisher.open(config.kvEvents, firstModelName(config));
  try {
    return { kvEvents, ...(await openRegistry(config, kvEvents)) };
  } catch (error) {
    await kvEvents?.close();
    throw error;
  }
}

export async function startSidecar(config: StartOptions): Promise<RunningSidecar> {
  const {
    token,
    tlsCert,
    tlsKey,
    metricsPort,
    metricsHost = "127.0.0.1",
    heartbeatMs = DEFAULT_HEARTBEAT_MS,
    resumable = DEFAULT_RESUMABLE,
  } = config;
  const { kvEvents, registry, shared, loader } = await openModels(config);
  const metrics = new EngineMetrics();
  const shutdown = new AbortController();
  // Every call in progress listens for shutdown; there may be far more than Node's default of 10.
  setMaxListeners(0, shutdown.signal);
  const streams = new ResumableStreams(resumable);
  // ListModels, Resume and /healthz refuse once the drain period is over; calls that need a model, from its start (the
  // registry).
  const draining = (): boolean => shutdown.signal.aborted;
  const observer = startObserver(config.trace, metrics.registry);
  const files = modelFiles(registry, loader);
  const impl = createInferenceService({ registry, metrics, draining, heartbeatMs, streams, observer, files });

  const authorized = tokenCheck(token);
  const grpcServer = new grpc.Server({ interceptors: [grpcTokenInterceptor(authorized)] });
  const health = addInferenceService(grpcServer, impl, shutdown.signal);
  const plainState = { metrics: prometheusMetrics(metrics, () => modelLoads(registry)), draining };
  const plain = plainHandler({ ...plainState, authorized });
  let serving = true;
  const http1 = grpcWebHandler(impl, shutdown.signal, plain, [connectTokenInterceptor(authorized)], () => serving);
  const tls =
    tlsCert !== undefined && tlsKey !== undefined
      ? { cert: readFileSync(tlsCert), key: readFileSync(tlsKey) }
      : undefined;
  const listening = await listen(grpcServer, http1 as never, config.host, config.port, tls);
  const metricsListening =
    metricsPort === undefined ? undefined : await listenMetrics(plainState, metricsHost, metricsPort);
  // Sizes for ListModels before any load, off the start's path.
  void registry.survey((entry) => !isRemoteModel(entry.source));

  let stopping: Promise<void> | undefined;
  return {
    port: listening.port,
    url: `${tls === undefined ? "http" : "https"}://${config.host}:${listening.port}`,
    metricsPort: metricsListening?.port,
    get models() {
      return registry.loaded();
    },
    registry,
    metrics,
    kvEvents,
    transport: inProcessTransport(impl, shutdown.signal),
    stop() {
      serving = false;
      const parts = { health, registry, metrics, listening, metricsListening, shutdown, streams, shared, kvEvents };
      stopping ??= stopServing(config.drainMs, { ...parts, observer });
      return stopping;
    },
  };
}

/** What `stop` ends, in its order. */
interface Serving {
  readonly health: ReturnType<typeof addInferenceService>;
  readonly registry: ModelRegistry;
  readonly metrics: EngineMetrics;
  readonly listening: Awaited<ReturnType<typeof listen>>;
  readonly metricsListening: { close(): Promise<void> } | undefined;
  readonly shutdown: AbortController;
  readonly streams: ResumableStreams;
  readonly shared: { dispose(): Promise<void> } | undefined;
  readonly kvEvents: KvEventPublisher | undefined;
  readonly observer: ReturnType<typeof startObserver>;
}

/** Refuses new work, lets generations finish within `drainMs`, then closes every part. */
async function stopServing(drainMs: number, s: Serving): Promise<void> {
  refuseNewWork(s.health, s.registry);
  const deadline = Date.now() + drainMs;
  const drained = (): boolean => s.metrics.generationsActive === 0;
  // Stop accepting new calls at once; calls in progress keep their connections.
  const closing = s.listening.close(drainMs);
  while (!drained() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  s.shutdown.abort();
  s.streams.cancelAll();
  await closing;
  s.listening.closeConnections();
  await s.metricsListening?.close();
  await s.registry.close();
  await s.shared?.dispose();
  // After the models: their unloads' events go out.
  await s.kvEvents?.close();
  await s.observer.tracing?.shutdown().catch(() => undefined);
}
