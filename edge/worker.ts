// Cloudflare Workers / `wrangler dev` entry. Its settings (vars, secrets, bindings) are listed
// in docs/configuration.md (edge/config/settings.ts); they are checked when the Worker loads, so a
// bad one stops `wrangler dev` and a deployment before any request (docs/decisions.md, "Settings
// checked before the edge starts").
import { env as startEnv } from "cloudflare:workers";
import { createApp, type App, type AppOptions } from "./http/app.js";
import type { AccessOptions } from "./access/policy.js";
import { bindingRateLimiter, type RateLimitBinding } from "./access/rate-limit.js";
import { parseEdgeConfig, sidecarUrlsOf, traceSettingsOf } from "./config/parse.js";
import type { EdgeConfig } from "./config/settings.js";
import { createSidecarClient, createSidecarHealthClient } from "./sidecars/connection.js";
import type { D1DatabaseLike } from "./state/store/d1.js";
import { d1Store } from "./state/stores.js";
import { cloudflareQueue, consumeMessage, r2FileStore, type QueueLike, type QueueMessageLike, type R2BucketLike } from "./state/batches/cloudflare.js";
import { workerSockets } from "./worker-sockets.js";
import { startWorkerTracing, type WaitUntil, type WorkerTracing } from "./worker-trace.js";

/** The bindings the Worker uses beside its variables (wrangler.toml). */
export interface WorkerEnv {
  RATE_LIMITER?: RateLimitBinding;
  DB?: D1DatabaseLike;
  /** Batch files (wrangler.toml's `[[r2_buckets]]`). */
  FILES?: R2BucketLike;
  /** What drives batch lines (wrangler.toml's `[[queues.producers]]`, consumed by this Worker). */
  BATCH_QUEUE?: QueueLike;
}

/**
 * The largest batch input file under workerd (docs/contract.md, "Batches"): the whole file is read
 * into the isolate's 128 MB to be checked and its lines stored, so a quarter of that, leaving room
 * for the text, the parsed lines and their statements at once.
 */
const WORKER_MAX_FILE_BYTES = 32 * 1024 * 1024;

type WorkerConfig = EdgeConfig<"worker">;

/** The Rate Limiting binding's window, as configured in wrangler.toml. */
const RATE_LIMIT_PERIOD_SECONDS = 60;

/** The settings, or a throw naming the bad one: at module scope, that fails the Worker's start. */
export function workerConfig(env: Readonly<Record<string, unknown>>): WorkerConfig {
  const config = parseEdgeConfig(env, "worker");
  if ((config.rateLimit ?? 0) > 0 && env["RATE_LIMITER"] === undefined)
    throw new Error("RATE_LIMIT is set but the RATE_LIMITER binding is missing from wrangler.toml");
  return config;
}

const config = workerConfig(startEnv);

function accessOf(config: WorkerConfig, env: WorkerEnv): AccessOptions {
  const access: AccessOptions = { allowOpen: config.allowOpen };
  if (config.apiKeys !== undefined) access.apiKeys = config.apiKeys;
  if (config.corsOrigins !== undefined) access.corsOrigins = config.corsOrigins;
  if ((config.rateLimit ?? 0) > 0 && env.RATE_LIMITER !== undefined) access.rateLimiter = bindingRateLimiter(env.RATE_LIMITER, RATE_LIMIT_PERIOD_SECONDS);
  return access;
}

/** The isolate's tracer, when OTEL_EXPORTER_OTLP_ENDPOINT turns traces on (worker-trace.ts). */
const tracer: WorkerTracing | undefined = ((settings) => (settings === undefined ? undefined : startWorkerTracing(settings)))(traceSettingsOf(config));

/** The app of these settings and bindings. */
export function createWorkerApp(config: WorkerConfig, env: WorkerEnv): App {
  const link = { token: config.sidecarToken, headers: config.sidecarHeaders };
  const options: AppOptions = {
    // What each sidecar serves and its load are learnt again by every new isolate (edge/sidecars/).
    sidecars: sidecarUrlsOf(config).map((url) => ({
      url,
      client: createSidecarClient(url, undefined, link),
      health: createSidecarHealthClient(url, undefined, link),
    })),
    access: accessOf(config, env),
    abandonProbeMs: config.abandonProbeMs,
    maxBodyBytes: config.maxBodyBytes,
    keepAliveMs: config.keepAliveMs,
    sidecarStallMs: config.sidecarStallMs,
    webSockets: workerSockets,
    tracing: tracer?.tracing,
  };
  if (env.DB !== undefined) options.store = d1Store(env.DB);
  if (env.FILES !== undefined && env.BATCH_QUEUE !== undefined)
    options.batches = { files: r2FileStore(env.FILES), queue: cloudflareQueue(env.BATCH_QUEUE), maxFileBytes: WORKER_MAX_FILE_BYTES };
  if (config.logRequests) {
    options.log = (line) => console.log(JSON.stringify(line));
    options.logBodies = config.logBodies;
  }
  const app = createApp(options);
  console.log(JSON.stringify({ event: "edge_config", access: app.access.describe() }));
  return app;
}

let app: App | undefined;

export default {
  fetch(request: Request, env: WorkerEnv, context: WaitUntil): Promise<Response> {
    // One app per isolate: its settings cannot change while it lives.
    app ??= createWorkerApp(config, env);
    tracer?.track(request, context);
    return app.fetch(request);
  },
  /** The batch queue's consumer: each message one step of one batch (state/batches/cloudflare.ts). */
  async queue(batch: { readonly messages: readonly QueueMessageLike[] }, env: WorkerEnv): Promise<void> {
    app ??= createWorkerApp(config, env);
    const batches = app.batches;
    for (const message of batch.messages) {
      if (batches === undefined) message.ack();
      else await consumeMessage(message, batches.runner, batches.queue);
    }
  },
};
