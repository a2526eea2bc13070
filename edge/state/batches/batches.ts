// Batches as the app holds them (AppOptions.batches, docs/decisions.md "Batches"): the store's
// records, the host's file store and queue, and the runner that answers lines through the app's
// own routes. A queue in the app's own process (the Node host's) is handed the runner's steps.
import type { AppContext } from "../../core/context.js";
import { BatchRunner, resumeBatches } from "./runner.js";
import type { BatchQueue, BatchStore, FileStore } from "./store.js";

/** What a host gives for batches. */
export interface BatchHost {
  /** Where files' bytes live (R2 under workerd, a data folder on Node). */
  readonly files: FileStore;
  /** What drives lines (a Cloudflare Queue, or the Node host's in-process queue). */
  readonly queue: BatchQueue;
  /** The largest file (or Anthropic create body) accepted, in bytes. */
  readonly maxFileBytes: number;
}

export interface Batches {
  readonly store: BatchStore;
  readonly files: FileStore;
  readonly queue: BatchQueue;
  readonly runner: BatchRunner;
  readonly maxFileBytes: number;
  /** Every unfinished batch sent to the queue again (a host starting). */
  resume(): Promise<void>;
  /** Stops a queue in the app's process; its lines stay pending. */
  stop(): void;
}

export function createBatches(
  host: BatchHost,
  store: BatchStore,
  context: AppContext,
  handle: (request: Request) => Promise<Response>,
): Batches {
  const queue = host.queue;
  const runner = new BatchRunner({
    store,
    files: host.files,
    handle,
    newId: context.newId,
    now: context.now,
    ...(queue.signal === undefined ? {} : { signal: queue.signal }),
  });
  queue.serve?.((id) => runner.step(id), context.reportUnexpected);
  return {
    store,
    files: host.files,
    queue,
    runner,
    maxFileBytes: host.maxFileBytes,
    resume: () => resumeBatches(store, queue),
    stop: () => queue.stop?.(),
  };
}
