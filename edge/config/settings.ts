// Every setting of the edge, once: its environment variable, kind, default, help, and the hosts
// that read it (both, the Node edge only, the Worker only). parse.ts reads them; the Worker
// (edge/hosts/worker/) and the Node edge (edge/hosts/node/env.ts) build their options from the result;
// `npm run docs:config` writes docs/configuration.md from this table.
import { boolean, httpUrl, httpUrls, integer, jsonHeaders, keyList, oneOf, text, type Kind } from "./kinds.js";

interface SettingBase<T> {
  /** The environment variable (a Worker var or secret). */
  readonly env: string;
  readonly kind: Kind<T>;
  /** What it does, for docs/configuration.md (Markdown). */
  readonly help: string;
  /** The default as docs/configuration.md shows it, when not the value itself (e.g. `4 MiB`). */
  readonly shown?: string;
  /** A secret or a URL that may carry credentials: a refusal never repeats the value. */
  readonly secret?: boolean;
}

export interface DefaultedSetting<T> extends SettingBase<T> {
  readonly default: T;
}

export interface OptionalSetting<T> extends SettingBase<T> {
  readonly default?: undefined;
}

export type Setting = DefaultedSetting<unknown> | OptionalSetting<unknown>;

/** The typed value a setting gives: its kind's, or undefined when it has no default and is unset. */
export type ValueOf<S> =
  S extends DefaultedSetting<infer T> ? T : S extends OptionalSetting<infer T> ? T | undefined : never;

/** Settings both hosts read. */
export const SHARED_SETTINGS = {
  sidecarUrl: {
    env: "SIDECAR_URL",
    kind: httpUrl,
    default: "http://127.0.0.1:50051",
    secret: true,
    help: "the sidecar's gRPC-Web base URL (`https://…` for a TLS sidecar)",
  },
  sidecarUrls: {
    env: "SIDECAR_URLS",
    kind: httpUrls,
    secret: true,
    help:
      "several sidecars, instead of `SIDECAR_URL` (the same token and headers for each): each request goes to one " +
      "that serves " +
      "its model (one that has it loaded first), a conversation's turns to the same one, else the least loaded, with " +
      "failover",
  },
  sidecarToken: {
    env: "SIDECAR_TOKEN",
    kind: text("text (secret)", "text"),
    secret: true,
    help: "the sidecar's shared secret, sent on every call (a secret on Workers)",
  },
  sidecarHeaders: {
    env: "SIDECAR_HEADERS",
    kind: jsonHeaders,
    secret: true,
    help:
      "more headers for sidecar calls, e.g. a Cloudflare Access service token " +
      '`{"CF-Access-Client-Id":"…","CF-Access-Client-Secret":"…"}` (a secret on Workers)',
  },
  apiKeys: {
    env: "API_KEYS",
    kind: keyList,
    secret: true,
    help:
      "client keys, each a key or `sha256:<hex>` of one (a secret on Workers). Unset: only requests addressed to " +
      "a loopback host are served",
  },
  adminKeys: {
    env: "ADMIN_KEYS",
    kind: keyList,
    secret: true,
    help:
      "admin keys, in the same form: each is a client key that may also change the catalogue (Ollama's pull by " +
      "address and delete); a secret on Workers",
  },
  allowOpen: { env: "ALLOW_OPEN", kind: boolean, default: false, help: "`true`: serve any host without keys" },
  corsOrigins: {
    env: "CORS_ORIGINS",
    kind: text("list", "web origins, comma-separated, or *"),
    shown: "see [Access](contract.md#access)",
    help: "allowed web origins, comma-separated, or `*`",
  },
  rateLimit: {
    env: "RATE_LIMIT",
    kind: integer(0),
    shown: "none",
    help:
      "requests per minute per key (unset or 0: no limit): the Worker's Rate Limiting binding `RATE_LIMITER`, an " +
      "in-memory limiter per process on Node",
  },
  maxBodyBytes: {
    env: "MAX_BODY_BYTES",
    kind: integer(0),
    default: 32 * 1024 * 1024,
    shown: "32 MiB",
    help: "request body limit in bytes (room for images inline: base64 makes 20 MiB of image about 27 MiB of JSON)",
  },
  mediaMaxBytes: {
    env: "MEDIA_MAX_BYTES",
    kind: integer(1),
    default: 20 * 1024 * 1024,
    shown: "20 MiB",
    help:
      "the largest image a request may hold, decoded (a data: URL, base64, a fetched URL or a file): a larger one is " +
      "a 400 naming the part ([images](contract.md#images))",
  },
  mediaFetch: {
    env: "MEDIA_FETCH",
    kind: boolean,
    default: true,
    help:
      "`false`: image URLs (http, https) are a 400 instead of being fetched by the edge; data: URLs, base64 and " +
      "files still work",
  },
  mediaFetchTimeoutMs: {
    env: "MEDIA_FETCH_TIMEOUT_MS",
    kind: integer(1),
    default: 10_000,
    help:
      "fetching one image by URL, redirects and body included, takes at most this long (else a 400 naming the " +
      "part)",
  },
  mediaAllowHosts: {
    env: "MEDIA_ALLOW_HOSTS",
    kind: text("list", "host names or addresses, comma-separated"),
    shown: "none",
    help:
      "hosts image URLs may be fetched from although their address is private, loopback or link-local, or their " +
      "name local (`localhost`, `*.internal`), e.g. `127.0.0.1,images.internal`; others such are refused",
  },
  keepAliveMs: {
    env: "KEEP_ALIVE_MS",
    kind: integer(0),
    default: 10_000,
    help:
      "`: ping` after this much silence on a stream (0: never); the write is also how workerd notices a client " +
      "that left",
  },
  sidecarStallMs: {
    env: "SIDECAR_STALL_MS",
    kind: integer(0),
    default: 30_000,
    help:
      "a sidecar that sends nothing, not even its heartbeat, this long is taken as stalled: the call is cancelled, " +
      "504 (or the " +
      "stream's error event); 0: never",
  },
  logRequests: {
    env: "LOG_REQUESTS",
    kind: boolean,
    default: true,
    help:
      "one JSON line per request ([fields](contract.md#request-logs)): `console.log` on Workers, pino on stdout " +
      "on Node",
  },
  logBodies: {
    env: "LOG_BODIES",
    kind: boolean,
    default: false,
    help: "`true` adds prompt and reply text to the request log",
  },
  otlpEndpoint: {
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    kind: httpUrl,
    secret: true,
    help:
      "turns traces on ([Traces](decisions.md#traces)): the OTLP/HTTP collector's base URL, spans sent to its " +
      "`/v1/traces`",
  },
  otlpTracesEndpoint: {
    env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    kind: httpUrl,
    secret: true,
    help: "turns traces on too: the full URL spans are sent to (before `OTEL_EXPORTER_OTLP_ENDPOINT`)",
  },
  otlpProtocol: {
    env: "OTEL_EXPORTER_OTLP_PROTOCOL",
    kind: oneOf("http/protobuf", "http/json"),
    default: "http/protobuf",
    help: "how spans are encoded (`grpc` is not offered: Workers cannot speak it)",
  },
  otelServiceName: { env: "OTEL_SERVICE_NAME", kind: text(), default: "llm-edge", help: "the spans' `service.name`" },
  captureContent: {
    env: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    kind: boolean,
    default: false,
    help:
      "`true` adds the request's messages and the reply's text to the GenAI span (`gen_ai.input.messages`, " +
      "`gen_ai.output.messages`)",
  },
} as const satisfies Record<string, Setting>;

/** Settings only the Node edge (`npm run edge`, edge/hosts/node/) reads. */
export const NODE_SETTINGS = {
  port: { env: "EDGE_PORT", kind: integer(0, 65535), default: 8080, help: "port to listen on (0 picks a free one)" },
  hostname: { env: "EDGE_HOST", kind: text("text", "an address"), default: "127.0.0.1", help: "address to bind" },
  renderPort: {
    env: "RENDER_PORT",
    kind: integer(0, 65535),
    help:
      "also serve vLLM's render API alone (`POST /v1/chat/completions/render`, `/v1/completions/render`) on this " +
      "port of `EDGE_HOST`, without keys, for llm-d's endpoint picker (its token-producer sends none), under the " +
      "main port's connection limits; unset: not served there (the main port serves it to callers with keys)",
  },
  sidecarCa: {
    env: "SIDECAR_CA",
    kind: text("path", "a path"),
    help: "a PEM file of the CA that signed the sidecar's TLS certificate (`https://` sidecar URLs)",
  },
  storePath: {
    env: "STORE_PATH",
    kind: text("path", "a path"),
    default: ".data/llm-edge.sqlite",
    help:
      "the SQLite file `/c1` keeps conversations in, `/v1/responses` its stored responses, `/v1/conversations` its " +
      "conversations and `/v1/messages` its threads (`:memory:`: until the edge stops); `migrations/` is applied at " +
      "start-up",
  },
  filesPath: {
    env: "FILES_PATH",
    kind: text("path", "a path"),
    default: ".data/files",
    help:
      "the folder batch files are kept in (`/v1/files` uploads, batches' output and error files, Message Batches' " +
      "results); " +
      "their records and the batches' lines are in `STORE_PATH`",
  },
  headersTimeoutMs: {
    env: "HEADERS_TIMEOUT_MS",
    kind: integer(0),
    default: 10_000,
    help: "a request's headers must arrive within this (else 408 and the connection closes); 0: no limit",
  },
  requestTimeoutMs: {
    env: "REQUEST_TIMEOUT_MS",
    kind: integer(0),
    default: 60_000,
    help:
      "the whole request must arrive within this (raised to `HEADERS_TIMEOUT_MS` if below it; answers and streams " +
      "may take as " +
      "long as they need); 0: no limit",
  },
  keepAliveTimeoutMs: {
    env: "KEEP_ALIVE_TIMEOUT_MS",
    kind: integer(0),
    default: 5_000,
    help: "idle keep-alive connections close after this",
  },
  maxConnections: {
    env: "MAX_CONNECTIONS",
    kind: integer(0),
    default: 1024,
    help: "connections beyond this many are refused (closed at once)",
  },
} as const satisfies Record<string, Setting>;

/** Settings only the Worker (edge/hosts/worker/) reads. */
export const WORKER_SETTINGS = {
  abandonProbeMs: {
    env: "ABANDON_PROBE_MS",
    kind: integer(0),
    default: 500,
    help:
      "a JSON answer not ready after this long commits to 200 and writes a space this often, so a client that left " +
      "is noticed " +
      "under workerd ([why](decisions.md#abandoned-requests-under-workerd)); 0: off",
  },
} as const satisfies Record<string, Setting>;

/** The Worker's bindings (wrangler.toml): not variables, documented beside them. */
export const WORKER_BINDINGS = [
  {
    env: "DB",
    type: "D1 binding",
    where: "`[[d1_databases]]`",
    help:
      "the D1 database `/c1` keeps conversations in, `/v1/responses` its stored responses, `/v1/conversations` its " +
      "conversations and `/v1/messages` its threads (without it, nothing is stored). `npm start` applies " +
      "`migrations/` to " +
      "`wrangler dev`'s local copy; to deploy, `wrangler d1 create llm-edge`, its id in `wrangler.toml`, `wrangler " +
      "d1 " +
      "migrations apply llm-edge --remote`",
  },
  {
    env: "RATE_LIMITER",
    type: "Rate Limiting binding",
    where: "`[[ratelimits]]`",
    help:
      "counts `RATE_LIMIT` per key over 60 s; its `limit` must say the same number as `RATE_LIMIT` (`npm start` " +
      "writes a copy " +
      "of `wrangler.toml` when they differ). Required when `RATE_LIMIT` is above 0",
  },
  {
    env: "FILES",
    type: "R2 binding",
    where: "`[[r2_buckets]]`",
    help:
      "batch files (`/v1/files` uploads, batches' output and error files, Message Batches' results); with `DB` and " +
      "`BATCH_QUEUE`, the batch routes are served. To deploy, `wrangler r2 bucket create llm-edge-files`",
  },
  {
    env: "BATCH_QUEUE",
    type: "Queue binding",
    where: "`[[queues.producers]]` and `[[queues.consumers]]`",
    help:
      "drives batch lines: each message one step of one batch, consumed by this Worker (`wrangler dev` runs the " +
      "queue " +
      "locally). To deploy, `wrangler queues create llm-edge-batches`",
  },
] as const;

export type Host = "node" | "worker";

/** The tables one host reads. */
export const SETTINGS_OF = {
  node: { ...SHARED_SETTINGS, ...NODE_SETTINGS },
  worker: { ...SHARED_SETTINGS, ...WORKER_SETTINGS },
} as const;

export type EdgeConfig<H extends Host> = {
  readonly [K in keyof (typeof SETTINGS_OF)[H]]: ValueOf<(typeof SETTINGS_OF)[H][K]>;
};
