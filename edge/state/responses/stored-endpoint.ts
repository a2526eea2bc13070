// The Responses endpoint of one stored request: the stream or the body is answered as without a
// store, and the finished Response is stored (Endpoint.finished) before the closing frames or
// the body are sent. The stored object is the one answered: its output items get the same ids
// (one id tape read by the stream encoder and by the stored copy, in block order) and the same
// `completed_at`.
import type { GenerationResult } from "../../upstream/generation.js";
import { createResponsesStreamEncoder, encodeResponse } from "../../protocols/openai-responses/encoder.js";
import { responsesFinish } from "../../protocols/openai-responses/finish.js";
import { responsesEndpoint } from "../../protocols/openai-responses/handler.js";
import type { ResponsesRequest, responsesRequestSchema } from "../../protocols/openai-responses/schema.js";
import type { Endpoint, ResponseMeta } from "../../core/endpoint.js";
import type { StoredItem } from "../items/items.js";
import type { ResponseStores } from "./store.js";
import { appendResponse } from "./conversation.js";

/** Where a finished response is stored, and what it is stored with. */
export interface PendingResponse {
  readonly store: ResponseStores;
  readonly owner: string;
  readonly inputItems: readonly StoredItem[];
  readonly context: readonly StoredItem[];
  /** The OpenAI conversation (`conversation`) the input and output items are appended to. */
  readonly conversationId?: string | undefined;
}

/** Ids handed out once and read again, in the same order, by every reader. */
function idTape(fresh: () => string): () => () => string {
  const ids: string[] = [];
  return () => {
    let next = 0;
    return () => {
      if (next === ids.length) ids.push(fresh());
      return ids[next++] as string;
    };
  };
}

/** One request's view of its meta: ids from the tape, `now` fixed once the reply is finished. */
class SameResponse {
  private tape: (() => () => string) | undefined;
  private finishedAt: number | undefined;
  stored: Record<string, unknown> | undefined;

  meta(meta: ResponseMeta): ResponseMeta {
    this.tape ??= idTape(meta.newId);
    return { ...meta, newId: this.tape(), now: () => this.finishedAt ?? meta.now() };
  }

  freeze(meta: ResponseMeta): void {
    this.finishedAt = meta.now();
  }
}

async function store(
  pending: PendingResponse,
  same: SameResponse,
  body: ResponsesRequest,
  result: GenerationResult,
  meta: ResponseMeta,
): Promise<void> {
  // A cancelled reply never gets here; completed and incomplete ones are stored. The conversation
  // gets its items first: if it was deleted meanwhile, the response is not stored either.
  if ((body.store !== true && pending.conversationId === undefined) || responsesFinish(result.finish) === null) return;
  same.freeze(meta);
  const response = encodeResponse(body, same.meta(meta), result);
  if (pending.conversationId !== undefined)
    await appendResponse(
      pending.store.conversations,
      pending.owner,
      pending.conversationId,
      pending.inputItems,
      response,
    );
  if (body.store === true) {
    await pending.store.responses.putResponse({
      id: meta.id,
      owner: pending.owner,
      createdAt: meta.created * 1000,
      response,
      inputItems: pending.inputItems,
      context: pending.context,
    });
  }
  same.stored = response;
}

export function storedEndpoint(pending: PendingResponse): Endpoint<typeof responsesRequestSchema> {
  const same = new SameResponse();
  return {
    ...responsesEndpoint,
    streamEncoder: (body, meta) => createResponsesStreamEncoder(body, same.meta(meta)),
    encodeResult: (body, meta, result) => same.stored ?? encodeResponse(body, same.meta(meta), result),
    finished: (body, result, meta) => store(pending, same, body, result, meta),
  };
}
