// The Node edge's configuration from its environment (edge/node.ts lists the variables).
import { pino } from "pino";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { AccessOptions } from "../access/policy.js";
import type { RateLimiter } from "../access/rate-limit.js";
import { DEFAULT_SIDECAR_URL, parseSidecarHeaders, parseSidecarUrls } from "../sidecars/connection.js";
import { createEdgeMetrics } from "./metrics.js";
import type { ConnectionLimits, NodeEdgeOptions } from "./server.js";
import { DEFAULT_STORE_PATH } from "./sqlite-store.js";

export function envNumber(name: string, env: NodeJS.ProcessEnv): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new Error(`${name} must be a non-negative integer`);
  return number;
}

/** `RATE_LIMIT` requests per minute per key, counted in this process's memory. */
export function memoryRateLimiter(perMinute: number): RateLimiter {
  const limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  return {
    async check(keyId) {
      try {
        await limiter.consume(keyId);
        return { allowed: true, retryAfterSeconds: 0 };
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        return { allowed: false, retryAfterSeconds: refusal.msBeforeNext / 1000 };
      }
    },
  };
}

/** The access settings: API_KEYS, ALLOW_OPEN, CORS_ORIGINS, RATE_LIMIT. */
export function accessFromEnv(env: NodeJS.ProcessEnv): AccessOptions {
  const access: AccessOptions = { allowOpen: env["ALLOW_OPEN"]?.trim().toLowerCase() === "true" };
  if (env["API_KEYS"] !== undefined) access.apiKeys = env["API_KEYS"];
  if (env["CORS_ORIGINS"] !== undefined) access.corsOrigins = env["CORS_ORIGINS"];
  const limit = envNumber("RATE_LIMIT", env);
  if (limit !== undefined && limit > 0) access.rateLimiter = memoryRateLimiter(limit);
  return access;
}

function limitsFromEnv(env: NodeJS.ProcessEnv): Partial<ConnectionLimits> {
  const limits: { -readonly [K in keyof ConnectionLimits]?: number } = {};
  const set = (key: keyof ConnectionLimits, name: string): void => {
    const value = envNumber(name, env);
    if (value !== undefined) limits[key] = value;
  };
  set("headersTimeoutMs", "HEADERS_TIMEOUT_MS");
  set("requestTimeoutMs", "REQUEST_TIMEOUT_MS");
  set("keepAliveTimeoutMs", "KEEP_ALIVE_TIMEOUT_MS");
  set("maxConnections", "MAX_CONNECTIONS");
  return limits;
}

/** Everything `npm run edge` reads from its environment. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): NodeEdgeOptions {
  const urls = parseSidecarUrls(env["SIDECAR_URLS"], env["SIDECAR_URL"]);
  const options: NodeEdgeOptions = {
    sidecarUrl: urls[0] ?? DEFAULT_SIDECAR_URL,
    ...(urls.length > 1 ? { sidecarUrls: urls } : {}),
    metrics: createEdgeMetrics(),
    port: envNumber("EDGE_PORT", env) ?? 8080,
    hostname: env["EDGE_HOST"] ?? "127.0.0.1",
    access: accessFromEnv(env),
    sidecarLink: { token: env["SIDECAR_TOKEN"], headers: parseSidecarHeaders(env["SIDECAR_HEADERS"]) },
    limits: limitsFromEnv(env),
    storePath: env["STORE_PATH"] || DEFAULT_STORE_PATH,
  };
  if (env["SIDECAR_CA"]) options.sidecarCa = env["SIDECAR_CA"];
  if (env["LOG_REQUESTS"] !== "false") {
    const logger = pino({ base: null, timestamp: false });
    options.log = (line) => logger.info(line);
    options.logBodies = env["LOG_BODIES"] === "true";
  }
  const maxBodyBytes = envNumber("MAX_BODY_BYTES", env);
  if (maxBodyBytes !== undefined) options.maxBodyBytes = maxBodyBytes;
  const keepAliveMs = envNumber("KEEP_ALIVE_MS", env);
  if (keepAliveMs !== undefined) options.keepAliveMs = keepAliveMs;
  const stallMs = envNumber("SIDECAR_STALL_MS", env);
  if (stallMs !== undefined) options.sidecarStallMs = stallMs;
  return options;
}
