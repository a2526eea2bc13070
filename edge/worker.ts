// Cloudflare Workers / `wrangler dev` entry. Configuration comes from the Worker's
// environment ([vars] in wrangler.toml, `--var NAME:value`, secrets, or `.dev.vars` locally):
//   SIDECAR_URL     gRPC-Web base URL of the sidecar (default http://127.0.0.1:50051)
//   SIDECAR_URLS    several sidecars, comma-separated (instead of SIDECAR_URL): requests are routed
//                   by model, conversation affinity and load, with failover (edge/sidecars/)
//   MAX_BODY_BYTES  request body limit (default 4 MiB)
//   KEEP_ALIVE_MS   `: ping` after this much stream silence (default 10000; 0 disables)
//   API_KEYS        client keys, comma-separated, each a key or `sha256:<hex>` (a secret:
//                   `wrangler secret put API_KEYS`); unset: loopback hosts only
//   ALLOW_OPEN      `true` serves any host without keys
//   CORS_ORIGINS    allowed web origins, comma-separated, or `*`
//   RATE_LIMIT      requests per minute per key, enforced by the RATE_LIMITER binding
//                   (`[[ratelimits]]` in wrangler.toml, whose `limit` must say the same)
//   SIDECAR_TOKEN   the sidecar's shared secret (a secret), sent on every call
//   SIDECAR_HEADERS more headers for sidecar calls, a JSON object (e.g. a tunnel's service token)
//   ABANDON_PROBE_MS a JSON answer not ready after this long commits to 200 and writes a space
//                   this often, so a client that left is noticed (default 500; 0 disables)
//   SIDECAR_STALL_MS a sidecar that sends nothing (not even its heartbeat) this long is stalled:
//                   the call is cancelled, 504 / the error event (default 30000; 0 never)
//   DB              the D1 binding (`[[d1_databases]]` in wrangler.toml) /c1 keeps conversations in;
//                   without it /c1 is not served
//   LOG_REQUESTS    `false` turns the one-line-per-request JSON log (console.log) off
//   LOG_BODIES      `true` adds prompt and reply text to it (off by default)
import { createApp, type App, type AppOptions } from "./http/app.js";
import type { AccessOptions } from "./access/policy.js";
import { bindingRateLimiter, type RateLimitBinding } from "./access/rate-limit.js";
import { createSidecarClient, createSidecarHealthClient, parseSidecarHeaders, parseSidecarUrls } from "./sidecars/connection.js";
import type { D1DatabaseLike } from "./state/store/d1.js";
import { d1Store } from "./state/stores.js";

export interface WorkerEnv {
  SIDECAR_URL?: string;
  SIDECAR_URLS?: string;
  MAX_BODY_BYTES?: string;
  KEEP_ALIVE_MS?: string;
  API_KEYS?: string;
  ALLOW_OPEN?: string;
  CORS_ORIGINS?: string;
  RATE_LIMIT?: string;
  RATE_LIMITER?: RateLimitBinding;
  SIDECAR_TOKEN?: string;
  SIDECAR_HEADERS?: string;
  LOG_REQUESTS?: string;
  ABANDON_PROBE_MS?: string;
  SIDECAR_STALL_MS?: string;
  LOG_BODIES?: string;
  DB?: D1DatabaseLike;
}

/** workerd notices a client that left only when written to: probe JSON answers this often. */
const DEFAULT_ABANDON_PROBE_MS = 500;

/** The Rate Limiting binding's window, as configured in wrangler.toml. */
const RATE_LIMIT_PERIOD_SECONDS = 60;

function count(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

function accessOf(env: WorkerEnv): AccessOptions {
  const access: AccessOptions = { allowOpen: env.ALLOW_OPEN?.trim().toLowerCase() === "true" };
  if (env.API_KEYS !== undefined) access.apiKeys = env.API_KEYS;
  if (env.CORS_ORIGINS !== undefined) access.corsOrigins = env.CORS_ORIGINS;
  const limit = count(env.RATE_LIMIT);
  if (limit !== undefined && limit > 0) {
    if (env.RATE_LIMITER === undefined) throw new Error("RATE_LIMIT is set but the RATE_LIMITER binding is missing from wrangler.toml");
    access.rateLimiter = bindingRateLimiter(env.RATE_LIMITER, RATE_LIMIT_PERIOD_SECONDS);
  }
  return access;
}

let cached: { key: string; app: App } | undefined;

/** One app per configuration, reused across requests of this isolate. */
export function appFor(env: WorkerEnv): App {
  const urls = parseSidecarUrls(env.SIDECAR_URLS, env.SIDECAR_URL);
  const maxBodyBytes = count(env.MAX_BODY_BYTES);
  const keepAliveMs = count(env.KEEP_ALIVE_MS);
  const key = JSON.stringify([urls, maxBodyBytes, keepAliveMs, env.API_KEYS, env.ALLOW_OPEN, env.CORS_ORIGINS, env.RATE_LIMIT, env.SIDECAR_TOKEN, env.SIDECAR_HEADERS, env.LOG_REQUESTS, env.LOG_BODIES, env.ABANDON_PROBE_MS, env.SIDECAR_STALL_MS, env.DB !== undefined]);
  if (cached?.key !== key) {
    const link = { token: env.SIDECAR_TOKEN, headers: parseSidecarHeaders(env.SIDECAR_HEADERS) };
    const options: AppOptions = {
      // What each sidecar serves and its load are learnt again by every new isolate (edge/sidecars/).
      sidecars: urls.map((url) => ({ url, client: createSidecarClient(url, undefined, link), health: createSidecarHealthClient(url, undefined, link) })),
      access: accessOf(env),
      abandonProbeMs: count(env.ABANDON_PROBE_MS) ?? DEFAULT_ABANDON_PROBE_MS,
    };
    if (maxBodyBytes !== undefined) options.maxBodyBytes = maxBodyBytes;
    if (env.DB !== undefined) options.store = d1Store(env.DB);
    if (keepAliveMs !== undefined) options.keepAliveMs = keepAliveMs;
    const stallMs = count(env.SIDECAR_STALL_MS);
    if (stallMs !== undefined) options.sidecarStallMs = stallMs;
    if (env.LOG_REQUESTS !== "false") {
      options.log = (line) => console.log(JSON.stringify(line));
      options.logBodies = env.LOG_BODIES === "true";
    }
    cached = { key, app: createApp(options) };
    console.log(JSON.stringify({ event: "edge_config", access: cached.app.access.describe() }));
  }
  return cached.app;
}

export default {
  fetch(request: Request, env: WorkerEnv): Promise<Response> {
    return appFor(env).fetch(request);
  },
};
