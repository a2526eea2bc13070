// The app of the Worker's settings and bindings: its sidecars over `fetch`, access with the Rate
// Limiting binding, the D1 store, batches on R2 and a Queue, WebSockets and traces of workerd.
import { mediaOptionsOf } from "../../config/media.js";
import type { AccessOptions } from "../../access/policy.js";
import { bindingRateLimiter } from "../../access/rate-limit.js";
import { sidecarUrlsOf } from "../../config/parse.js";
import { createApp, type App, type AppOptions } from "../../http/app.js";
import { createSidecarClient, createSidecarHealthClient } from "../../upstream/connection.js";
import type { WorkerConfig, WorkerEnv } from "./env.js";
import { r2FileStore } from "./files.js";
import { cloudflareQueue } from "./queue.js";
import { workerSockets } from "./sockets.js";
import { d1Store } from "./store.js";
import type { WorkerTracing } from "./tracing.js";

/**
 * The largest batch input file under workerd (docs/contract.md, "Batches"): the whole file is read
 * into the isolate's 128 MB to be checked and its lines stored, so a quarter of that, leaving room
 * for the text, the parsed lines and their statements at once.
 */
const WORKER_MAX_FILE_BYTES = 32 * 1024 * 1024;

/** The Rate Limiting binding's window, as configured in wrangler.toml. */
const RATE_LIMIT_PERIOD_SECONDS = 60;

function accessOf(config: WorkerConfig, env: WorkerEnv): AccessOptions {
  const access: AccessOptions = { allowOpen: config.allowOpen };
  if (config.apiKeys !== undefined) access.apiKeys = config.apiKeys;
  if (config.adminKeys !== undefined) access.adminKeys = config.adminKeys;
  if (config.corsOrigins !== undefined) access.corsOrigins = config.corsOrigins;
  if ((config.rateLimit ?? 0) > 0 && env.RATE_LIMITER !== undefined)
    access.rateLimiter = bindingRateLimiter(env.RATE_LIMITER, RATE_LIMIT_PERIOD_SECONDS);
  return access;
}

/** The app of these settings and bindings. */
export function createWorkerApp(config: WorkerConfig, env: WorkerEnv, tracer?: WorkerTracing): App {
  const link = { token: config.sidecarToken, headers: config.sidecarHeaders };
  const options: AppOptions = {
    // What each sidecar serves and its load are learnt again by every new isolate (edge/upstream/).
    sidecars: sidecarUrlsOf(config).map((url) => ({
      url,
      client: createSidecarClient(url, undefined, link),
      health: createSidecarHealthClient(url, undefined, link),
    })),
    access: accessOf(config, env),
    abandonProbeMs: config.abandonProbeMs,
    maxBodyBytes: config.maxBodyBytes,
    media: mediaOptionsOf(config),
    keepAliveMs: config.keepAliveMs,
    sidecarStallMs: config.sidecarStallMs,
    webSockets: workerSockets,
    tracing: tracer?.tracing,
  };
  if (env.DB !== undefined) options.store = d1Store(env.DB);
  if (env.FILES !== undefined && env.BATCH_QUEUE !== undefined)
    options.batches = {
      files: r2FileStore(env.FILES),
      queue: cloudflareQueue(env.BATCH_QUEUE),
      maxFileBytes: WORKER_MAX_FILE_BYTES,
    };
  if (config.logRequests) {
    options.log = (line) => console.log(JSON.stringify(line));
    options.logBodies = config.logBodies;
  }
  const app = createApp(options);
  console.log(JSON.stringify({ event: "edge_config", access: app.access.describe() }));
  return app;
}
