// The Worker's parts of batches (worker.ts, wrangler.toml): files in an R2 bucket (`FILES`) and
// lines driven by a Cloudflare Queue (`BATCH_QUEUE`, produced and consumed by this Worker). Each
// message asks for one step of one batch and carries the token of the step that sent it; the
// consumer sends the next message before it acks this one, so a crash between the two at worst
// runs a step twice, and a line run twice is answered once (runner.ts). A chain of messages lost
// (a local queue's when `wrangler dev` stops) is started again when the batch is read (handler.ts). Typed by the parts used, as state/store/d1.ts types D1.
import type { BatchRunner } from "./runner.js";
import type { BatchQueue, FileStore } from "./store.js";

/** The part of an R2 bucket binding the file store uses. */
export interface R2BucketLike {
  put(key: string, value: string | Uint8Array): Promise<unknown>;
  get(key: string): Promise<{ readonly body: ReadableStream<Uint8Array> } | null>;
  delete(key: string): Promise<void>;
}

/** The part of a Queue producer binding the batch queue uses. */
export interface QueueLike {
  send(body: unknown, options?: { delaySeconds?: number }): Promise<void>;
}

/** One delivered message of a queue batch. */
export interface QueueMessageLike {
  readonly body: unknown;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** A step that met only lines to try later asks again after this long. */
const WAIT_SECONDS = 2;

export function r2FileStore(bucket: R2BucketLike): FileStore {
  return {
    async put(key, body) {
      await bucket.put(key, body);
    },
    async get(key) {
      return (await bucket.get(key))?.body ?? undefined;
    },
    delete: (key) => bucket.delete(key),
  };
}

export function cloudflareQueue(queue: QueueLike): BatchQueue {
  return {
    send: (batchId, options = {}) => {
      const delaySeconds = options.delaySeconds ?? 0;
      return queue.send({ batchId, token: options.token ?? null }, delaySeconds > 0 ? { delaySeconds } : {});
    },
  };
}

/** Serves one message: a step of its batch, then the next message while lines are left. */
export async function consumeMessage(message: QueueMessageLike, runner: BatchRunner, queue: BatchQueue): Promise<void> {
  const body = message.body as { batchId?: unknown; token?: unknown } | null;
  const batchId = typeof body?.batchId === "string" ? body.batchId : undefined;
  if (batchId === undefined) return message.ack();
  try {
    const { outcome, token } = await runner.step(batchId, typeof body?.token === "number" ? body.token : undefined);
    if (outcome !== "done") await queue.send(batchId, { delaySeconds: outcome === "wait" ? WAIT_SECONDS : 0, token });
    message.ack();
  } catch {
    message.retry({ delaySeconds: WAIT_SECONDS });
  }
}
