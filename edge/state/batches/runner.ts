// What drives a batch's lines (docs/decisions.md, "Batches"): a step runs a few pending lines
// through the app's own routes (the same validation, errors and bodies as the endpoint alone), each
// marked PRIORITY_BATCH, and writes each result in the statement that ends the line; a line the
// sidecar could not take now (429, 502, 503, 504, 529) stays pending, and so does one answered 500,
// a few times. With no line pending the batch ends (results.ts). A host's BatchQueue calls `step`
// (a Cloudflare Queue's consumer, edge/hosts/worker/queue.ts) or the queue itself (the Node host's
// in-process one, edge/hosts/node/queue.ts).
import { Priority } from "../../../proto/gen/inference/v1/inference_pb.js";
import { ANONYMOUS, setCaller } from "../../access/caller.js";
import { setPriority } from "../../core/priority.js";
import { finalize } from "./results.js";
import {
  isTerminal,
  type BatchLine,
  type BatchQueue,
  type BatchRecord,
  type BatchStore,
  type FileStore,
  type Step,
} from "./store.js";

/** Lines run at once by one step of one batch. */
export const LINES_PER_STEP = 4;

/** Answers that mean "not now": the line is tried again later, never written as an error. */
const RETRY_LATER = new Set([429, 502, 503, 504, 529]);

/**
 * A 500 is tried again this many times before it is the line's answer: a sidecar that died
 * mid-answer is a 500, and so is a bug, which must not be tried until the batch expires.
 */
export const SERVER_ERROR_ATTEMPTS = 3;

/** An unfinished batch whose last step began longer ago than this is sent to its queue again when read. */
export const STALE_MS = 30_000;

export interface BatchRunnerOptions {
  readonly store: BatchStore;
  readonly files: FileStore;
  /** The app's own routes: a line's request is answered as the endpoint answers it alone. */
  readonly handle: (request: Request) => Promise<Response>;
  readonly newId: () => string;
  readonly now: () => number;
  /** Aborts the lines running (the host stopping). */
  readonly signal?: AbortSignal;
}

/** The request a line is answered as: its body without `stream` (a batch's answers are whole). */
function lineRequest(batch: BatchRecord, line: BatchLine, signal: AbortSignal | undefined): Request {
  const { stream: _stream, ...body } = line.body ?? {};
  const init: RequestInit = {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  if (signal !== undefined) init.signal = signal;
  const request = new Request(`http://batch.internal${batch.endpoint}`, init);
  setCaller(request, batch.owner === ANONYMOUS.keyId ? ANONYMOUS : { keyId: batch.owner });
  setPriority(request, Priority.BATCH);
  return request;
}

const jsonOr = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export class BatchRunner {
  constructor(private readonly options: BatchRunnerOptions) {}

  /** One step of the batch `id`; with a `token`, only if no other step began since it was given. */
  async step(id: string, token?: number): Promise<Step> {
    const { store, files, now } = this.options;
    const at = now();
    const batch = await store.batchById(id);
    if (batch === undefined || isTerminal(batch.status)) return { outcome: "done", token: at };
    if (!(await store.touchBatch(id, at, token === undefined ? undefined : { touchedAt: token })))
      return { outcome: "done", token: at };
    if (batch.status === "cancelling") await store.closePending(id, "cancelled");
    else if (at >= batch.expiresAt) await store.closePending(id, "expired");
    const lines = await store.pendingLines(id, LINES_PER_STEP);
    if (lines.length === 0) {
      await finalize(batch, store, files, now);
      return { outcome: "done", token: at };
    }
    const ran = await Promise.all(lines.map((line) => this.run(batch, line)));
    return { outcome: ran.some(Boolean) ? "more" : "wait", token: at };
  }

  /** Runs one line; false when it is to be tried later. */
  private async run(batch: BatchRecord, line: BatchLine): Promise<boolean> {
    const { store, handle, newId, signal } = this.options;
    const stopped = () => signal?.aborted === true;
    if (stopped()) return false;
    const response = await handle(lineRequest(batch, line, signal));
    const text = await response.text();
    if (RETRY_LATER.has(response.status) || stopped()) return false;
    if (response.status === 500 && line.attempts + 1 < SERVER_ERROR_ATTEMPTS) {
      await store.noteAttempt(batch.id, line.index);
      return false;
    }
    const state = response.status >= 200 && response.status < 300 ? "succeeded" : "failed";
    await store.finishLine(batch.id, line.index, state, {
      status: response.status,
      requestId: `req_${newId()}`,
      body: jsonOr(text),
    });
    return true;
  }
}

/** Each unfinished batch sent to the queue again (a host starting up). */
export async function resumeBatches(store: BatchStore, queue: BatchQueue): Promise<void> {
  for (const id of await store.unfinishedBatches()) await queue.send(id);
}
