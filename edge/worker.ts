// Cloudflare Workers / `wrangler dev` entry. Configuration comes from the Worker's
// environment ([vars] in wrangler.toml, or `--var NAME:value`):
//   SIDECAR_URL     gRPC-Web base URL of the sidecar (default http://127.0.0.1:50051)
//   MAX_BODY_BYTES  request body limit (default 4 MiB)
//   KEEP_ALIVE_MS   `: ping` after this much stream silence (default 10000; 0 disables)
import { createApp, type App, type AppOptions } from "./app.js";
import { DEFAULT_SIDECAR_URL, createSidecarClient } from "./sidecar-client.js";

export interface WorkerEnv {
  SIDECAR_URL?: string;
  MAX_BODY_BYTES?: string;
  KEEP_ALIVE_MS?: string;
}

function count(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

let cached: { key: string; app: App } | undefined;

/** One app per configuration, reused across requests of this isolate. */
export function appFor(env: WorkerEnv): App {
  const url = env.SIDECAR_URL ?? DEFAULT_SIDECAR_URL;
  const maxBodyBytes = count(env.MAX_BODY_BYTES);
  const keepAliveMs = count(env.KEEP_ALIVE_MS);
  const key = JSON.stringify([url, maxBodyBytes, keepAliveMs]);
  if (cached?.key !== key) {
    const options: AppOptions = { sidecar: createSidecarClient(url) };
    if (maxBodyBytes !== undefined) options.maxBodyBytes = maxBodyBytes;
    if (keepAliveMs !== undefined) options.keepAliveMs = keepAliveMs;
    cached = { key, app: createApp(options) };
  }
  return cached.app;
}

export default {
  fetch(request: Request, env: WorkerEnv): Promise<Response> {
    return appFor(env).fetch(request);
  },
};
