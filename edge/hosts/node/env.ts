// The Node edge's options from its environment: the settings of edge/config/ (docs/configuration.md).
import { mediaOptionsOf } from "../../config/media.js";
import { pino } from "pino";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { AccessOptions } from "../../access/policy.js";
import type { RateLimiter } from "../../access/rate-limit.js";
import { parseEdgeConfig, sidecarUrlsOf, traceSettingsOf } from "../../config/parse.js";
import type { EdgeConfig } from "../../config/settings.js";
import { createEdgeMetrics } from "./metrics.js";
import type { NodeEdgeOptions } from "./server.js";

type NodeConfig = EdgeConfig<"node">;

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

/** The access settings: API_KEYS, ADMIN_KEYS, ALLOW_OPEN, CORS_ORIGINS, RATE_LIMIT. */
export function accessFromEnv(env: NodeJS.ProcessEnv): AccessOptions {
  return accessOf(parseEdgeConfig(env, "node"));
}

function accessOf(config: NodeConfig): AccessOptions {
  const access: AccessOptions = { allowOpen: config.allowOpen };
  if (config.apiKeys !== undefined) access.apiKeys = config.apiKeys;
  if (config.adminKeys !== undefined) access.adminKeys = config.adminKeys;
  if (config.corsOrigins !== undefined) access.corsOrigins = config.corsOrigins;
  if ((config.rateLimit ?? 0) > 0) access.rateLimiter = memoryRateLimiter(config.rateLimit ?? 0);
  return access;
}

/** Everything `npm run edge` reads from its environment (docs/configuration.md); throws an EdgeConfigError. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): NodeEdgeOptions {
  const config = parseEdgeConfig(env, "node");
  const urls = sidecarUrlsOf(config);
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = config;
  const options: NodeEdgeOptions = {
    sidecarUrl: urls[0] ?? config.sidecarUrl,
    ...(urls.length > 1 ? { sidecarUrls: urls } : {}),
    metrics: createEdgeMetrics(),
    port: config.port,
    hostname: config.hostname,
    renderPort: config.renderPort,
    access: accessOf(config),
    sidecarLink: { token: config.sidecarToken, headers: config.sidecarHeaders },
    limits: { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections },
    storePath: config.storePath,
    filesPath: config.filesPath,
    maxBodyBytes: config.maxBodyBytes,
    media: mediaOptionsOf(config),
    keepAliveMs: config.keepAliveMs,
    sidecarStallMs: config.sidecarStallMs,
    trace: traceSettingsOf(config),
  };
  if (config.sidecarCa !== undefined) options.sidecarCa = config.sidecarCa;
  if (config.logRequests) {
    const logger = pino({ base: null, timestamp: false });
    options.log = (line) => logger.info(line);
    options.logBodies = config.logBodies;
  }
  return options;
}
