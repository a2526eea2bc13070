// The Worker's settings and bindings. Its settings (vars, secrets) are listed in
// docs/configuration.md (edge/config/settings.ts); main.ts checks them when the Worker loads, so a
// bad one stops `wrangler dev` and a deployment before any request (docs/decisions.md, "Settings
// checked before the edge starts").
import { parseEdgeConfig } from "../../config/parse.js";
import type { EdgeConfig } from "../../config/settings.js";
import type { RateLimitBinding } from "../../access/rate-limit.js";
import type { R2BucketLike } from "./files.js";
import type { QueueLike } from "./queue.js";
import type { D1DatabaseLike } from "./store.js";

/** The bindings the Worker uses beside its variables (wrangler.toml). */
export interface WorkerEnv {
  RATE_LIMITER?: RateLimitBinding;
  DB?: D1DatabaseLike;
  /** Batch files (wrangler.toml's `[[r2_buckets]]`). */
  FILES?: R2BucketLike;
  /** What drives batch lines (wrangler.toml's `[[queues.producers]]`, consumed by this Worker). */
  BATCH_QUEUE?: QueueLike;
}

export type WorkerConfig = EdgeConfig<"worker">;

/** The settings, or a throw naming the bad one: at module scope, that fails the Worker's start. */
export function workerConfig(env: Readonly<Record<string, unknown>>): WorkerConfig {
  const config = parseEdgeConfig(env, "worker");
  if ((config.rateLimit ?? 0) > 0 && env["RATE_LIMITER"] === undefined)
    throw new Error("RATE_LIMIT is set but the RATE_LIMITER binding is missing from wrangler.toml");
  return config;
}
