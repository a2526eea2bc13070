// The Worker's parts of batches (worker.ts, wrangler.toml): files in an R2 bucket (`FILES`) and
// lines driven by a Cloudflare Queue (`BATCH_QUEUE`, produced and consumed by this Worker). Each
// message asks for one step of one batch; the consumer sends the next message before it acks this
// one, so a crash between the two at worst runs a step twice, and a line run twice is answered
// once (runner.ts). Typed by the parts used, as state/store/d1.ts types D1.
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
  return { send: (batchId, delaySeconds = 0) => queue.send({ batchId }, delaySeconds > 0 ? { delaySeconds } : {}) };
}

/** Serves one message: a step of its batch, then the next message while lines are left. */
export async function consumeMessage(message: QueueMessageLike, runner: BatchRunner, queue: BatchQueue): Promise<void> {
  const body = message.body as { batchId?: unknown } | null;
  const batchId = typeof body?.batchId === "string" ? body.batchId : undefined;
  if (batchId === undefined) return message.ack();
  try {
    const outcome = await runner.step(batchId);
    if (outcome !== "done") await queue.send(batchId, outcome === "wait" ? WAIT_SECONDS : 0);
    message.ack();
  } catch {
    message.retry({ delaySeconds: WAIT_SECONDS });
  }
}
