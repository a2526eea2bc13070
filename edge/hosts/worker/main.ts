// Cloudflare Workers / `wrangler dev` entry (wrangler.toml's `main`): the settings checked at module
// scope (env.ts), one app per isolate (server.ts), the batch queue's consumer (queue.ts).
import { env as startEnv } from "cloudflare:workers";
import type { App } from "../../http/app.js";
import { traceSettingsOf } from "../../config/parse.js";
import { workerConfig, type WorkerEnv } from "./env.js";
import { consumeMessage, type QueueMessageLike } from "./queue.js";
import { createWorkerApp } from "./server.js";
import { startWorkerTracing, type WaitUntil, type WorkerTracing } from "./tracing.js";

const config = workerConfig(startEnv);

/** The isolate's tracer, when OTEL_EXPORTER_OTLP_ENDPOINT turns traces on (tracing.ts). */
const tracer: WorkerTracing | undefined = ((settings) =>
  settings === undefined ? undefined : startWorkerTracing(settings))(traceSettingsOf(config));

let app: App | undefined;

export default {
  fetch(request: Request, env: WorkerEnv, context: WaitUntil): Promise<Response> {
    // One app per isolate: its settings cannot change while it lives.
    app ??= createWorkerApp(config, env, tracer);
    tracer?.track(request, context);
    return app.fetch(request);
  },
  /** The batch queue's consumer: each message one step of one batch (queue.ts). */
  async queue(batch: { readonly messages: readonly QueueMessageLike[] }, env: WorkerEnv): Promise<void> {
    app ??= createWorkerApp(config, env, tracer);
    const batches = app.batches;
    for (const message of batch.messages) {
      if (batches === undefined) message.ack();
      else await consumeMessage(message, batches.runner, batches.queue);
    }
  },
};
