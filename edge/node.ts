// Node entry: serves the same fetch handler with @hono/node-server (docs/decisions.md, "Web-only edge").
// The only file in edge/ that may import node:* modules.
//   SIDECAR_URL   gRPC-Web base URL of the sidecar (default http://127.0.0.1:50051)
//   EDGE_PORT     port to listen on (default 8080; 0 picks a free one)
//   EDGE_HOST     address to bind (default 127.0.0.1)
//   MAX_BODY_BYTES  request body limit (default 4 MiB)
//   KEEP_ALIVE_MS   `: ping` after this much stream silence (default 10000; 0 disables)
//   API_KEYS        client keys, comma-separated, each a key or `sha256:<hex>`; unset: loopback only
//   ALLOW_OPEN      `true` serves any host without keys
//   CORS_ORIGINS    allowed web origins, comma-separated, or `*`
//   RATE_LIMIT      requests per minute per key (in memory, per edge process)
//   SIDECAR_TOKEN   the sidecar's shared secret, sent on every call
//   SIDECAR_HEADERS more headers for sidecar calls, a JSON object
//   SIDECAR_CA      a PEM file of the CA that signed the sidecar's TLS certificate (https:// URLs)
//   LOG_REQUESTS    `false` turns the one-line-per-request JSON log (stdout, pino) off
//   LOG_BODIES      `true` adds prompt and reply text to it (off by default)
import { serve } from "@hono/node-server";
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { Agent, fetch as undiciFetch } from "undici";
import type { AddressInfo } from "node:net";
import process from "node:process";
import { pathToFileURL } from "node:url";
import type { AccessOptions } from "./access/policy.js";
import type { RateLimiter } from "./access/rate-limit.js";
import { createApp, type AppOptions } from "./app.js";
import { DEFAULT_SIDECAR_URL, createSidecarClient, parseSidecarHeaders, type FetchImpl, type SidecarLink } from "./sidecar-client.js";

export interface NodeEdgeOptions extends Partial<AppOptions> {
  sidecarUrl?: string;
  /** Credentials for the sidecar link (ignored when `sidecar` is given). */
  sidecarLink?: SidecarLink;
  /** A PEM file of the CA that signed the sidecar's certificate (ignored when `sidecar` is given). */
  sidecarCa?: string;
  port?: number;
  hostname?: string;
}

export interface RunningEdge {
  /** e.g. "http://127.0.0.1:8080" */
  readonly url: string;
  /** The access mode in force, for the start-up log. */
  readonly access: string;
  close(): Promise<void>;
}

/** Starts the edge on Node; resolves once it listens. */
export function startNodeEdge(options: NodeEdgeOptions = {}): Promise<RunningEdge> {
  const { sidecarUrl, sidecarLink, sidecarCa, port, hostname, ...appOptions } = options;
  const fetchImpl = sidecarCa === undefined ? undefined : fetchTrusting(sidecarCa);
  const sidecar = appOptions.sidecar ?? createSidecarClient(sidecarUrl ?? DEFAULT_SIDECAR_URL, fetchImpl, sidecarLink);
  const app = createApp({ ...appOptions, sidecar });
  const host = hostname ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: (request) => app.fetch(request), port: port ?? 8080, hostname: host }, (info: AddressInfo) => {
      const shownHost = info.family === "IPv6" ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${shownHost}:${info.port}`,
        access: app.access.describe(),
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            if ("closeAllConnections" in server) server.closeAllConnections();
          }),
      });
    });
    server.once("error", reject);
  });
}

/** A fetch that trusts the CA in `caFile` for https:// sidecars (a private CA, as deployments use). */
function fetchTrusting(caFile: string): FetchImpl {
  const dispatcher = new Agent({ connect: { ca: readFileSync(caFile) } });
  return (input, init) => undiciFetch(input as never, { ...(init as object), dispatcher } as never) as unknown as Promise<Response>;
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

/** The access settings from the environment (see the header). */
export function accessFromEnv(env: NodeJS.ProcessEnv): AccessOptions {
  const access: AccessOptions = { allowOpen: env["ALLOW_OPEN"]?.trim().toLowerCase() === "true" };
  if (env["API_KEYS"] !== undefined) access.apiKeys = env["API_KEYS"];
  if (env["CORS_ORIGINS"] !== undefined) access.corsOrigins = env["CORS_ORIGINS"];
  const limit = envNumber("RATE_LIMIT", env);
  if (limit !== undefined && limit > 0) access.rateLimiter = memoryRateLimiter(limit);
  return access;
}

function envNumber(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new Error(`${name} must be a non-negative integer`);
  return number;
}

async function main(): Promise<void> {
  const sidecarUrl = process.env["SIDECAR_URL"] ?? DEFAULT_SIDECAR_URL;
  const options: NodeEdgeOptions = {
    sidecarUrl,
    port: envNumber("EDGE_PORT") ?? 8080,
    hostname: process.env["EDGE_HOST"] ?? "127.0.0.1",
    access: accessFromEnv(process.env),
    sidecarLink: { token: process.env["SIDECAR_TOKEN"], headers: parseSidecarHeaders(process.env["SIDECAR_HEADERS"]) },
  };
  if (process.env["SIDECAR_CA"]) options.sidecarCa = process.env["SIDECAR_CA"];
  if (process.env["LOG_REQUESTS"] !== "false") {
    const logger = pino({ base: null, timestamp: false });
    options.log = (line) => logger.info(line);
    options.logBodies = process.env["LOG_BODIES"] === "true";
  }
  const maxBodyBytes = envNumber("MAX_BODY_BYTES");
  if (maxBodyBytes !== undefined) options.maxBodyBytes = maxBodyBytes;
  const keepAliveMs = envNumber("KEEP_ALIVE_MS");
  if (keepAliveMs !== undefined) options.keepAliveMs = keepAliveMs;
  const edge = await startNodeEdge(options);
  console.error(`edge listening on ${edge.url} (sidecar ${sidecarUrl}); ${edge.access}`);
  const stop = () => {
    edge.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
