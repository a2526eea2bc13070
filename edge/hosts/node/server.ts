// The edge on Node: the same fetch handler served by @hono/node-server, with the connection
// limits a public Node server needs (docs/contract.md, "Node server limits").
import type { IncomingMessage, Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import { DEFAULT_MAX_BODY_BYTES } from "../../core/body.js";
import { createApp, type App, type AppOptions } from "../../http/app.js";
import {
  DEFAULT_SIDECAR_URL,
  createSidecarClient,
  createSidecarHealthClient,
  type SidecarLink,
} from "../../upstream/connection.js";
import { withMetrics, type EdgeMetrics } from "./metrics.js";
import { startNodeTracing } from "./tracing.js";
import type { TraceSettings } from "../../config/parse.js";
import { sidecarFetch } from "./fetch.js";
import { openSqliteStore } from "./store.js";
import { folderFileStore, memoryFileStore } from "./files.js";
import { InProcessQueue } from "./queue.js";
import { nodeSockets } from "./sockets.js";
import { loadStaticFiles, withStaticFiles } from "./static.js";
import { listenHttp } from "./listen.js";
import { listenRender } from "./render-port.js";

/** How long a client may take, and how many may connect at once. */
export interface ConnectionLimits {
  /** The request's headers must arrive within this time (else 408 and the connection closes). */
  readonly headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this time; the answer may take longer. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  readonly keepAliveTimeoutMs: number;
  /** Connections beyond this many are refused (closed at once). */
  readonly maxConnections: number;
}

/** The largest batch input file on Node (docs/contract.md, "Batches"): OpenAI's own limit. */
export const NODE_MAX_FILE_BYTES = 200 * 1024 * 1024;

export const DEFAULT_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
};

export interface NodeEdgeOptions extends Partial<AppOptions> {
  sidecarUrl?: string;
  /** Several sidecars (SIDECAR_URLS); when given, `sidecarUrl` is not used. */
  sidecarUrls?: readonly string[];
  /** Counts routed calls per sidecar and serves them at GET /metrics (default: off). */
  metrics?: EdgeMetrics;
  /** Credentials for the sidecar link (ignored when `sidecar` is given). */
  sidecarLink?: SidecarLink;
  /** A PEM file of the CA that signed the sidecar's certificate (ignored when `sidecar` is given). */
  sidecarCa?: string;
  /**
   * The SQLite file /c1 keeps conversations in (ignored when `store` is given); default `:memory:`
   * (`npm run edge` passes STORE_PATH, default .data/llm-edge.sqlite).
   */
  storePath?: string;
  /**
   * The folder batch files are kept in (ignored when `batches` is given); default: in memory, as
   * the default store is (`npm run edge` passes FILES_PATH, default .data/files).
   */
  filesPath?: string;
  /** The playground page's folder, served at `/` (default public/; `false` serves no page). */
  publicDir?: string | false;
  port?: number;
  hostname?: string;
  /**
   * `RENDER_PORT`: also serve vLLM's render API alone on this port of `hostname`, without keys, for llm-d's endpoint
   * picker (render-port.ts); default: not served there (the main port serves it to callers with keys).
   */
  renderPort?: number | undefined;
  limits?: Partial<ConnectionLimits>;
  /** Traces to an OTLP collector (OTEL_EXPORTER_OTLP_*; ignored when `tracing` is given); default: off. */
  trace?: TraceSettings | undefined;
}

export interface RunningEdge {
  /** e.g. "http://127.0.0.1:8080" */
  readonly url: string;
  /** The access mode in force, for the start-up log. */
  readonly access: string;
  /** With `renderPort`: where the render API answers, e.g. "http://0.0.0.0:8000". */
  readonly renderUrl?: string;
  close(): Promise<void>;
}

/**
 * The edge once `listening`, with the render API listening on `port` too (when given), under the main port's
 * connection limits (a keyless port is no place for slow headers or endless bodies), and closed with it.
 */
async function withRenderPort(
  listening: Promise<RunningEdge>,
  app: App,
  hostname: string,
  port: number | undefined,
  limits: ConnectionLimits,
): Promise<RunningEdge> {
  const running = await listening;
  if (port === undefined) return running;
  const limited = {
    serverOptions: nodeServerOptions(limits),
    configure: (server: Server) => applyLimits(server, limits),
  };
  const render = await listenRender(app, hostname, port, limited).catch(async (error: unknown) => {
    await running.close();
    throw error;
  });
  return {
    ...running,
    renderUrl: render.url,
    close: () => Promise.all([render.close(), running.close()]).then(() => undefined),
  };
}

/**
 * node:http's settings for `limits` (0 turns a timeout off). A request cannot be complete before
 * its headers are, so a request timeout shorter than the headers timeout is raised to it (Node
 * refuses to start otherwise). Node checks both deadlines every `connectionsCheckingInterval`:
 * a quarter of the shortest one set, at most a second.
 */
export function nodeServerOptions(
  limits: ConnectionLimits,
): Pick<ServerOptions, "headersTimeout" | "requestTimeout" | "connectionsCheckingInterval"> {
  const headersTimeout = limits.headersTimeoutMs;
  const requestTimeout = limits.requestTimeoutMs === 0 ? 0 : Math.max(limits.requestTimeoutMs, headersTimeout);
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((ms) => ms > 0), 4000);
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(10, Math.floor(shortest / 4)) };
}

function applyLimits(server: Server, limits: ConnectionLimits): void {
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
}

/**
 * Tells the app of each new connection, until its first request or its close: a client sending
 * several requests at once opens one for each that its pool lacks (core/arriving.ts, `opened`).
 */
function announceConnections(server: Server, app: App): void {
  const waiting = new WeakMap<Socket, () => void>();
  server.on("connection", (socket: Socket) => {
    const came = app.connectionOpened();
    waiting.set(socket, came);
    socket.once("close", came);
  });
  server.on("request", (request: IncomingMessage) => {
    waiting.get(request.socket)?.();
    waiting.delete(request.socket);
  });
}

/** The sidecars the options name: the app's own, else clients over Node's fetch of `SIDECAR_URLS` or `SIDECAR_URL`. */
function sidecarsOf(options: NodeEdgeOptions): Pick<AppOptions, "sidecars" | "sidecar"> {
  const fetchImpl = sidecarFetch(options.sidecarCa);
  const link = options.sidecarLink;
  const sidecars =
    options.sidecars ??
    options.sidecarUrls?.map((url) => ({
      url,
      client: createSidecarClient(url, fetchImpl, link),
      health: createSidecarHealthClient(url, fetchImpl, link),
    }));
  const sidecar =
    options.sidecar ??
    (sidecars === undefined
      ? createSidecarClient(options.sidecarUrl ?? DEFAULT_SIDECAR_URL, fetchImpl, link)
      : undefined);
  return { ...(sidecars === undefined ? {} : { sidecars }), ...(sidecar === undefined ? {} : { sidecar }) };
}

/** Batches on Node: files in a folder (or memory), lines driven by the in-process queue. */
function nodeBatches(filesPath: string | undefined): NonNullable<AppOptions["batches"]> {
  const files = filesPath === undefined ? memoryFileStore() : folderFileStore(filesPath);
  return { files, queue: new InProcessQueue(), maxFileBytes: NODE_MAX_FILE_BYTES };
}

/** Stops the batches, closes the server (its connections at once), the store opened here and the traces. */
function closeEdge(
  server: Server,
  parts: {
    app: App;
    sockets: { closeAll(): void };
    closeStore: () => void;
    tracer: { shutdown(): Promise<unknown> } | undefined;
  },
): Promise<void> {
  return new Promise<void>((done, fail) => {
    parts.app.batches?.stop();
    server.close((error) => {
      parts.closeStore();
      const flushed = parts.tracer?.shutdown() ?? Promise.resolve();
      flushed.catch(() => undefined).then(() => (error ? fail(error) : done()));
    });
    server.closeAllConnections();
    parts.sockets.closeAll();
  });
}

/** Starts the edge on Node; resolves once it listens. */
export function startNodeEdge(options: NodeEdgeOptions = {}): Promise<RunningEdge> {
  const {
    sidecarUrl,
    sidecarUrls,
    sidecarLink,
    sidecarCa,
    storePath,
    filesPath,
    publicDir,
    port,
    hostname,
    limits,
    metrics,
    trace,
    ...appOptions
  } = options;
  const tracer = appOptions.tracing === undefined && trace !== undefined ? startNodeTracing(trace) : undefined;
  const { sidecars, sidecar } = sidecarsOf(options);
  // A store given is the caller's to close; one opened here closes with the server.
  const opened =
    appOptions.store === undefined
      ? openSqliteStore(storePath ?? ":memory:")
      : { store: appOptions.store, close: () => undefined };
  const routing = metrics === undefined ? appOptions.routing : { ...appOptions.routing, onOutcome: metrics.count };
  const sockets = nodeSockets(appOptions.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const app = createApp({
    webSockets: sockets.acceptor,
    ...appOptions,
    ...(sidecars === undefined ? {} : { sidecars }),
    ...(sidecar === undefined ? {} : { sidecar }),
    routing,
    store: opened.store,
    batches: appOptions.batches ?? nodeBatches(filesPath),
    ...(tracer === undefined ? {} : { tracing: tracer.tracing }),
  });
  // Batches left unfinished by the last run go on (docs/decisions.md, "Batches").
  app.batches?.resume().catch((error: unknown) => (appOptions.onUnexpectedError ?? console.error)(error));
  const toApi = (request: Request) => app.fetch(request);
  const toApp = metrics === undefined ? toApi : withMetrics(metrics, app, toApi);
  const handle = publicDir === false ? toApp : withStaticFiles(loadStaticFiles(publicDir), toApp);
  const host = hostname ?? "127.0.0.1";
  const all = { ...DEFAULT_LIMITS, ...limits };
  const configure = (server: Server): void => {
    applyLimits(server, all);
    announceConnections(server, app);
    sockets.attach(server, handle);
  };
  const listening = listenHttp(handle, host, port ?? 8080, { serverOptions: nodeServerOptions(all), configure }).then(
    ({ server, url }): RunningEdge => ({
      url,
      access: app.access.describe(),
      close: () => closeEdge(server, { app, sockets, closeStore: opened.close, tracer }),
    }),
  );
  return withRenderPort(listening, app, host, options.renderPort, all); // createApp gets renderPort too and ignores it
}
