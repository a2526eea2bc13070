// The edge's fetch handler: access, routes, CORS, and the one place where a thrown error is
// caught (answered by answer.ts in its route's protocol). Web APIs only (runs in workerd and on Node).
import { Router, type IRequest, type RouterType } from "itty-router";
import { setCaller } from "../access/caller.js";
import { createAccessPolicy, type AccessOptions, type AccessPolicy } from "../access/policy.js";
import { Arriving } from "../core/arriving.js";
import { DEFAULT_MAX_BODY_BYTES } from "../core/body.js";
import type { AppContext } from "../core/context.js";
import { preflight, withCors } from "./cors.js";
import { MethodNotAllowedError, NotFoundError } from "../base/errors.js";
import { RequestRecord, setRecord, type RequestLogger } from "../core/request-log.js";
import { answerError } from "./answer.js";
import { FALLBACK_ROUTES, renderRoutes, routeTable, type Route, type RouteProtocol } from "./routes.js";
import { randomId, systemClock } from "../core/identity.js";
import type { Protocol } from "../core/protocol-family.js";
import { anthropicProtocol } from "../protocols/anthropic-messages/protocol.js";
import { openAiProtocol } from "../protocols/openai-common/protocol.js";
import { vllmRenderProtocol } from "../protocols/openai-common/render.js";
import { ollamaProtocol } from "../protocols/ollama/protocol.js";
import type { Sidecar } from "../upstream/connection.js";
import { routedClient } from "../upstream/client.js";
import { SidecarPool, type PoolOptions } from "../upstream/pool.js";
import type { SidecarTarget } from "../upstream/sidecar-state.js";
import type { Stores } from "../state/stores.js";
import { createBatches, type BatchHost, type Batches } from "../state/batches/batches.js";
import { imageFiles } from "../state/batches/files-handler.js";
import { defaultMediaSettings, type MediaSettings } from "../core/media/settings.js";
import { wantsWebSocket, type SocketAcceptor } from "./socket/port.js";
import { ResponsesSession } from "./socket/responses-session.js";
import { withHeaders } from "../core/answers.js";
import { RequestTrace } from "../trace/request-trace.js";
import type { Tracing } from "../trace/host-tracing.js";

export const DEFAULT_KEEP_ALIVE_MS = 10_000;
/** Six of the sidecar's default heartbeat intervals (5 s). */
export const DEFAULT_SIDECAR_STALL_MS = 30_000;

export interface AppOptions {
  /** The inference sidecar (createSidecarClient(url), or a fake in tests); or give `sidecars`. */
  sidecar?: Sidecar;
  /** Several sidecars (SIDECAR_URLS), each with its URL; requests are routed among them. */
  sidecars?: readonly SidecarTarget[];
  /** How the sidecars are watched and picked (report age, backoff, metrics hook). */
  routing?: PoolOptions | undefined;
  /** `MAX_BODY_BYTES` (docs/configuration.md); default 32 MiB. */
  maxBodyBytes?: number;
  /** `MEDIA_MAX_BYTES`, `MEDIA_FETCH`, `MEDIA_FETCH_TIMEOUT_MS`, `MEDIA_ALLOW_HOSTS` (docs/configuration.md). */
  media?: Partial<Omit<MediaSettings, "files">>;
  /** Random part of response ids (`chatcmpl-<id>`); default 24 random base-62 characters. */
  newId?: () => string;
  /** Current time in ms since the epoch, for `created`; default Date.now. */
  now?: () => number;
  /** `KEEP_ALIVE_MS` (docs/configuration.md); default 10000, 0 disables. */
  keepAliveMs?: number;
  /** `ABANDON_PROBE_MS` (docs/configuration.md; the Worker's default is 500); default 0, off. */
  abandonProbeMs?: number;
  /** `SIDECAR_STALL_MS` (docs/configuration.md); default 30000, 0 never. */
  sidecarStallMs?: number;
  /** How long GET /health waits for the sidecar; default 2000 ms. */
  healthTimeoutMs?: number;
  /**
   * Called with unexpected failures (bugs, not client or sidecar errors); default
   * console.error. Never receives request content.
   */
  onUnexpectedError?: (error: unknown) => void;
  /**
   * Who may call (API keys, loopback-only or open, allowed web origins, per-key limits). Default:
   * no keys, so only loopback hosts and pages are served (docs/contract.md, "Access").
   */
  access?: AccessOptions;
  /** Receives one line per request (docs/contract.md, "Request logs"); default: none. */
  log?: RequestLogger;
  /** `LOG_BODIES` (docs/configuration.md); default false. */
  logBodies?: boolean;
  /** Where /c1 keeps conversations (D1 under workerd, SQLite on Node); without one /c1 is not served. */
  store?: Stores;
  /**
   * The host's part of batches (a file store, a queue, the largest file): with a store, the Files,
   * Batches and Message Batches routes are served (docs/contract.md, "Batches").
   */
  batches?: BatchHost;
  /**
   * The host's WebSockets (workerd's WebSocketPair, Node's `ws`): with it, an admitted upgrade of
   * GET /v1/responses is the Responses WebSocket mode (http/socket/); without it, refused by name.
   */
  webSockets?: SocketAcceptor;
  /** Traces (OTEL_EXPORTER_OTLP_ENDPOINT; edge/trace/): without it, no span is made. */
  tracing?: Tracing | undefined;
}

/** Each route-table protocol's error shape and headers; the server's own routes answer errors as OpenAI does. */
const PROTOCOLS: Readonly<Record<RouteProtocol, Protocol>> = {
  openai: openAiProtocol,
  anthropic: anthropicProtocol,
  ollama: ollamaProtocol,
  vllm: vllmRenderProtocol,
  server: openAiProtocol,
};

export interface App {
  fetch(request: Request): Promise<Response>;
  /**
   * vLLM's render API alone (`POST /v1/chat/completions/render`, `POST /v1/completions/render`), without the access
   * check: for a port only the cluster reaches (the Node edge's `RENDER_PORT`), where llm-d's endpoint picker, which
   * sends no key, asks for prompts' token ids. Any other path is a 404 in vLLM's shape.
   */
  render(request: Request): Promise<Response>;
  /** The access policy in force (for the start-up log). */
  readonly access: AccessPolicy;
  /** Batches, when served: the host drives them (resume at start, a queue consumer's steps, stop). */
  readonly batches: Batches | undefined;
  /**
   * A host that sees connections says one opened; it calls the returned function at the
   * connection's first request or its close (core/arriving.ts, `opened`).
   */
  connectionOpened(): () => void;
}

/** The sidecars of `options`: `sidecars`, else the one `sidecar`. */
function poolOf(options: AppOptions): SidecarPool {
  const targets =
    options.sidecars ?? (options.sidecar === undefined ? [] : [{ url: "sidecar", client: options.sidecar }]);
  if (targets.length === 0) throw new Error("createApp needs a sidecar (or sidecars)");
  return new SidecarPool(targets, { checkTimeoutMs: options.healthTimeoutMs ?? 2000, ...options.routing });
}

/**
 * The router of the route table, its fallbacks last (an unknown route's 404, a wrong method's 405),
 * and the protocol of the first entry whose path matches a path: whose errors it answers in.
 */
function routerOf(routes: readonly Route[]): {
  router: RouterType<IRequest, []>;
  protocolAt: (pathname: string) => Protocol;
  routeAt: (pathname: string) => string | undefined;
} {
  const router = Router<IRequest, []>();
  for (const route of routes)
    router[route.method === "POST" ? "post" : route.method === "GET" ? "get" : "delete"](route.path, route.handle);
  const unknownRoute = (request: IRequest): never => {
    const { pathname } = new URL(request.url);
    const allowed = router.routes
      .filter(([method, pattern]) => method !== "ALL" && pattern.test(pathname))
      .map(([method]) => method);
    if (allowed.length > 0) throw new MethodNotAllowedError(request.method, [...new Set(allowed)]);
    throw new NotFoundError(`Unknown route: ${request.method} ${pathname}`, { code: "unknown_route" });
  };
  for (const fallback of FALLBACK_ROUTES) router.all(fallback.path, unknownRoute);
  const protocolOf = new Map<string, Protocol>(
    [...routes, ...FALLBACK_ROUTES].map((route) => [route.path, PROTOCOLS[route.protocol]]),
  );
  const routeAt = (pathname: string): string | undefined =>
    router.routes.find(([, pattern]) => pattern.test(pathname))?.[3];
  const protocolAt = (pathname: string): Protocol => protocolOf.get(routeAt(pathname) ?? "*") ?? openAiProtocol;
  return { router, protocolAt, routeAt };
}

/** What every route gets: the sidecars, limits, clock and ids, from the options and their defaults. */
function contextOf(options: AppOptions, report: (error: unknown) => void): AppContext {
  const pool = poolOf(options);
  return {
    sidecar: routedClient(pool),
    sidecars: pool,
    arriving: new Arriving(),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    media: { ...defaultMediaSettings(), ...options.media },
    newId: options.newId ?? randomId,
    now: options.now ?? systemClock,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    healthTimeoutMs: options.healthTimeoutMs ?? 2000,
    abandonProbeMs: options.abandonProbeMs ?? 0,
    sidecarStallMs: options.sidecarStallMs ?? DEFAULT_SIDECAR_STALL_MS,
    reportUnexpected: report,
  };
}

export function createApp(options: AppOptions): App {
  const report = options.onUnexpectedError ?? ((error: unknown) => console.error("edge: unexpected error", error));
  const context = contextOf(options, report);

  const access = createAccessPolicy(options.access);
  // A batch line is answered by the route it names, as that endpoint alone answers (state/batches/).
  const dispatch = async (request: Request): Promise<Response> => {
    try {
      return (await router.fetch(request)) as Response;
    } catch (error) {
      return answerError(protocolAt(new URL(request.url).pathname), context, request, error);
    }
  };
  const batches =
    options.store === undefined || options.batches === undefined
      ? undefined
      : createBatches(options.batches, options.store.batches, context, dispatch);
  // A Responses input_image's file_id reads the Files API's files (core/media/).
  if (batches !== undefined) context.media.files = imageFiles(batches);
  const { router, protocolAt, routeAt } = routerOf(routeTable(context, access.mode, options.store, batches));

  // Whatever a route throws (and a refused access, an unknown route, a wrong method) is answered
  // here alone, in the error shape of the protocol its route-table entry names (answer.ts).
  const accept = options.webSockets;
  // An admitted upgrade of GET /v1/responses opens the WebSocket mode where the host has sockets.
  const answer = async (request: Request, url: URL, allowOrigin: string | undefined): Promise<Response> => {
    if (request.method === "OPTIONS") return preflight(request, allowOrigin);
    if (accept !== undefined && url.pathname === "/v1/responses" && wantsWebSocket(request))
      return accept(request, (port) => new ResponsesSession(port, request, fetch, report));
    return withCors((await router.fetch(request)) as Response, allowOrigin);
  };
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const allowOrigin = access.allowOrigin(request);
    const record = recordFor(request, url, context, options);
    const trace = options.tracing === undefined ? undefined : traced(options.tracing, request, url, routeAt);
    record.trace = trace;
    let response: Response;
    try {
      const caller = await access.admit(request, url);
      setCaller(request, caller);
      record.keyId = caller.keyId;
      response = await answer(request, url, allowOrigin);
    } catch (error) {
      response = withCors(answerError(protocolAt(url.pathname), context, request, error), allowOrigin);
    }
    record.status = response.status;
    if (response.status >= 400) record.outcome = "error";
    if (!record.deferred) record.end();
    // The trace this request joined, for the client to find it (docs/contract.md, "Traces").
    return trace === undefined || response.status === 101
      ? response
      : withHeaders(response, { traceresponse: trace.traceparent() });
  };
  const render = renderFetch(context);
  return { fetch, render, access, batches, connectionOpened: () => context.arriving.opened() };
}

/** A request's log record (core/request-log.ts), set on it. */
function recordFor(request: Request, url: URL, context: AppContext, options: AppOptions): RequestRecord {
  const log = options.log ?? (() => undefined);
  const id = `req_${context.newId()}`;
  const record = new RequestRecord(id, request.method, url.pathname, context.now(), options.logBodies === true, log);
  setRecord(request, record);
  return record;
}

/** The render routes alone, every error (an unknown path, a wrong method too) in vLLM's shape; no access check. */
function renderFetch(context: AppContext): (request: Request) => Promise<Response> {
  const { router } = routerOf(renderRoutes(context));
  return async (request) => {
    try {
      return (await router.fetch(request)) as Response;
    } catch (error) {
      return answerError(vllmRenderProtocol, context, request, error);
    }
  };
}

/** A request's spans (edge/trace/), named by the route that serves it. */
function traced(
  tracing: Tracing,
  request: Request,
  url: URL,
  routeAt: (pathname: string) => string | undefined,
): RequestTrace {
  const trace = new RequestTrace(tracing, request, url.pathname);
  const route = routeAt(url.pathname);
  if (route !== undefined && route !== "*") trace.route(route);
  return trace;
}
