// OpenAI's Batches API (docs/contract.md, "Batches"): POST /v1/batches (the input file checked
// whole at creation, input.ts), GET /v1/batches/{id}, GET /v1/batches, POST /v1/batches/{id}/cancel.
// The lines are run by the runner the host's queue drives (runner.ts).
import { callerOf } from "../../access/caller.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { pageOptions } from "../items/page.js";
import type { Batches } from "./batches.js";
import { batchObject } from "./encoder.js";
import { ownFile } from "./files-handler.js";
import { BATCH_ENDPOINTS, parseOpenAiInput } from "./input.js";
import { STALE_MS } from "./runner.js";
import { isTerminal, type BatchLine, type BatchRecord } from "./store.js";

/** The one completion window (OpenAI's), and how long a batch may run. */
export const COMPLETION_WINDOW_MS = 24 * 60 * 60 * 1000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The body's fields, checked: a 400 names the field at fault. */
function createFields(raw: unknown): {
  inputFileId: string;
  endpoint: string;
  metadata: Record<string, string> | null;
} {
  const body = isObject(raw) ? raw : {};
  const inputFileId = body["input_file_id"];
  if (typeof inputFileId !== "string" || inputFileId === "")
    throw new InvalidRequestError("'input_file_id' is required: a file id.", { param: "input_file_id" });
  const endpoint = body["endpoint"];
  if (typeof endpoint !== "string" || !(BATCH_ENDPOINTS as readonly string[]).includes(endpoint)) {
    throw new InvalidRequestError(`'endpoint' must be one of ${BATCH_ENDPOINTS.map((e) => `'${e}'`).join(", ")}.`, {
      param: "endpoint",
      code: "invalid_endpoint",
    });
  }
  if (body["completion_window"] !== "24h")
    throw new InvalidRequestError("'completion_window' must be '24h'.", { param: "completion_window" });
  const metadata = body["metadata"] ?? null;
  if (
    metadata !== null &&
    (!isObject(metadata) ||
      Object.values(metadata).some((v) => typeof v !== "string") ||
      Object.keys(metadata).length > 16)
  ) {
    throw new InvalidRequestError("'metadata' must be an object of at most 16 string values.", { param: "metadata" });
  }
  return { inputFileId, endpoint, metadata: metadata as Record<string, string> | null };
}

/** A new batch's record, in progress from its creation (its input was checked whole). */
export function newBatch(
  fields: Pick<BatchRecord, "id" | "owner" | "api" | "endpoint" | "inputFileId" | "metadata">,
  total: number,
  now: number,
): BatchRecord {
  const times = { in_progress_at: now };
  const expiresAt = now + COMPLETION_WINDOW_MS;
  return {
    ...fields,
    status: "in_progress",
    createdAt: now,
    expiresAt,
    times,
    outputFileId: null,
    errorFileId: null,
    total,
    touchedAt: now,
  };
}

/** Stores the batch with its lines and sends it to the queue. */
export async function startBatch(batches: Batches, batch: BatchRecord, lines: readonly BatchLine[]): Promise<void> {
  await batches.store.createBatch(batch, lines);
  await batches.queue.send(batch.id);
}

/**
 * The caller's batch `id` of `api`, or a 404. A batch unfinished whose last step began over
 * STALE_MS ago (its queue's messages lost, as a local queue's are when `wrangler dev` stops) is
 * sent to the queue again, once: the first reader to note the new time sends it.
 */
export async function ownBatch(
  batches: Batches,
  request: Request,
  id: string,
  api: BatchRecord["api"],
  now: number,
): Promise<BatchRecord> {
  const batch = await batches.store.getBatch(callerOf(request).keyId, id);
  if (batch === undefined || batch.api !== api)
    throw new NotFoundError(`No such batch: ${id}`, { param: "id", code: "batch_not_found" });
  if (!isTerminal(batch.status) && (await batches.store.touchBatch(id, now, { before: now - STALE_MS })))
    await batches.queue.send(id, { token: now });
  return batch;
}

/** POST /v1/batches */
export async function handleCreateBatch(request: Request, context: AppContext, batches: Batches): Promise<Response> {
  const { inputFileId, endpoint, metadata } = createFields(await readJsonBody(request, context.maxBodyBytes));
  const file = await ownFile(batches, request, inputFileId);
  if (file.purpose !== "batch")
    throw new InvalidRequestError(`File ${inputFileId} is not a batch input file (purpose '${file.purpose}').`, {
      param: "input_file_id",
    });
  const content = await batches.files.get(file.id);
  const text = content === undefined ? "" : await new Response(content).text();
  const lines = parseOpenAiInput(text, endpoint, context.maxBodyBytes);
  const owner = callerOf(request).keyId;
  const batch = newBatch(
    { id: `batch_${context.newId()}`, owner, api: "openai", endpoint, inputFileId, metadata },
    lines.length,
    context.now(),
  );
  await startBatch(batches, batch, lines);
  return jsonResponse(batchObject(batch, await batches.store.counts(batch.id)));
}

/** GET /v1/batches/{id} */
export async function handleGetBatch(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const batch = await ownBatch(batches, request, id, "openai", context.now());
  return jsonResponse(batchObject(batch, await batches.store.counts(id)));
}

/** GET /v1/batches?after=&limit= */
export async function handleListBatches(request: Request, batches: Batches): Promise<Response> {
  const { limit, after } = pageOptions(new URL(request.url));
  const page = await batches.store.listBatches(callerOf(request).keyId, "openai", { limit, after });
  const data = await Promise.all(
    page.data.map(async (batch) => batchObject(batch, await batches.store.counts(batch.id))),
  );
  return jsonResponse({
    object: "list",
    data,
    first_id: page.data[0]?.id ?? null,
    last_id: page.data.at(-1)?.id ?? null,
    has_more: page.hasMore,
  });
}

/**
 * Cancels a batch in progress: its lines not answered yet are cancelled and it ends (cancelling →
 * cancelled); a batch already cancelling or ended is left as it is. Resolves with the batch now.
 */
export async function cancelBatch(batches: Batches, batch: BatchRecord, now: number): Promise<BatchRecord> {
  if (await batches.store.moveBatch(batch.id, ["in_progress"], "cancelling", now)) {
    await batches.store.closePending(batch.id, "cancelled");
    await batches.queue.send(batch.id);
  }
  return (await batches.store.batchById(batch.id)) ?? batch;
}

/** POST /v1/batches/{id}/cancel */
export async function handleCancelBatch(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const batch = await cancelBatch(
    batches,
    await ownBatch(batches, request, id, "openai", context.now()),
    context.now(),
  );
  return jsonResponse(batchObject(batch, await batches.store.counts(id)));
}
