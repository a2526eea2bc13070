// Anthropic's Message Batches (docs/contract.md, "Batches"): POST /v1/messages/batches, GET
// /v1/messages/batches and …/{id}, POST …/{id}/cancel, GET …/{id}/results (JSONL, once ended),
// DELETE …/{id} (once ended). The same records and runner as OpenAI's batches; every line is
// answered by POST /v1/messages. Errors in Anthropic's shape (the routes' protocol).
import { callerOf } from "../../access/caller.js";
import { InvalidRequestError } from "../../base/errors.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import type { Batches } from "./batches.js";
import { messageBatchObject } from "./encoder.js";
import { cancelBatch, newBatch, ownBatch, startBatch } from "./handler.js";
import { parseAnthropicRequests } from "./input.js";
import { resultsKey } from "./results.js";
import { isTerminal, type BatchRecord } from "./store.js";

const origin = (request: Request): string => new URL(request.url).origin;

async function answer(batches: Batches, batch: BatchRecord, request: Request): Promise<Response> {
  return jsonResponse(messageBatchObject(batch, await batches.store.counts(batch.id), origin(request)));
}

/** POST /v1/messages/batches */
export async function handleCreateMessageBatch(
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const lines = parseAnthropicRequests(await readJsonBody(request, batches.maxFileBytes), context.maxBodyBytes);
  const owner = callerOf(request).keyId;
  const fields = {
    id: `msgbatch_${context.newId()}`,
    owner,
    api: "anthropic",
    endpoint: "/v1/messages",
    inputFileId: null,
    metadata: null,
  } as const;
  const batch = newBatch(fields, lines.length, context.now());
  await startBatch(batches, batch, lines);
  return answer(batches, batch, request);
}

/** GET /v1/messages/batches/{id} */
export async function handleGetMessageBatch(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  return answer(batches, await ownBatch(batches, request, id, "anthropic", context.now()), request);
}

/** GET /v1/messages/batches?limit=&after_id= (newest first) */
export async function handleListMessageBatches(request: Request, batches: Batches): Promise<Response> {
  const url = new URL(request.url);
  const raw = url.searchParams.get("limit");
  if (raw !== null && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000))
    throw new InvalidRequestError("limit: must be an integer from 1 to 1000.", { param: "limit" });
  const limit = raw === null ? 20 : Number(raw);
  const page = await batches.store.listBatches(callerOf(request).keyId, "anthropic", {
    limit,
    after: url.searchParams.get("after_id") ?? undefined,
  });
  const data = await Promise.all(
    page.data.map(async (batch) => messageBatchObject(batch, await batches.store.counts(batch.id), origin(request))),
  );
  return jsonResponse({
    data,
    has_more: page.hasMore,
    first_id: page.data[0]?.id ?? null,
    last_id: page.data.at(-1)?.id ?? null,
  });
}

/** POST /v1/messages/batches/{id}/cancel */
export async function handleCancelMessageBatch(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const batch = await cancelBatch(
    batches,
    await ownBatch(batches, request, id, "anthropic", context.now()),
    context.now(),
  );
  return answer(batches, batch, request);
}

function notEnded(id: string, what: string): InvalidRequestError {
  return new InvalidRequestError(`Message batch ${id} is still in progress: ${what} once it has ended.`, {
    code: "batch_not_ended",
  });
}

/** GET /v1/messages/batches/{id}/results */
export async function handleMessageBatchResults(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const batch = await ownBatch(batches, request, id, "anthropic", context.now());
  const body = isTerminal(batch.status) ? await batches.files.get(resultsKey(id)) : undefined;
  if (body === undefined) throw notEnded(id, "its results can be read");
  return new Response(body, { headers: { "content-type": "application/binary" } });
}

/** DELETE /v1/messages/batches/{id} */
export async function handleDeleteMessageBatch(
  id: string,
  request: Request,
  context: AppContext,
  batches: Batches,
): Promise<Response> {
  const batch = await ownBatch(batches, request, id, "anthropic", context.now());
  if (!isTerminal(batch.status)) throw notEnded(id, "it can be deleted");
  await batches.store.deleteBatch(batch.owner, id);
  await batches.files.delete(resultsKey(id));
  return jsonResponse({ id, type: "message_batch_deleted" });
}
