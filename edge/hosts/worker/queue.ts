// The Worker's BatchQueue: batch lines driven by a Cloudflare Queue (`BATCH_QUEUE` in
// wrangler.toml, produced and consumed by this Worker; main.ts's `queue` handler). Each
// message asks for one step of one batch and carries the token of the step that sent it; the
// consumer sends the next message before it acks this one, so a crash between the two at worst
// runs a step twice, and a line run twice is answered once (state/batches/runner.ts). A chain of
// messages lost (a local queue's when `wrangler dev` stops) is started again when the batch is
// read (state/batches/handler.ts). Typed by the parts used, as store.ts types D1.
import type { BatchRunner } from "../../state/batches/runner.js";
import type { BatchQueue } from "../../state/batches/store.js";

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
