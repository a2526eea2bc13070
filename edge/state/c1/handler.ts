// GET /c1/conversations, GET and DELETE /c1/conversations/{id}: JSON in one shot, only the
// caller's own conversations (another key's are not found).
import { callerOf } from "../../access/caller.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import type { C1Store } from "./store.js";
import { conversationDeleted, conversationList, conversationObject } from "./encoder.js";

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No conversation found with id '${id}'.`, { code: "conversation_not_found" });
}

function limitOf(url: URL): number {
  const raw = url.searchParams.get("limit");
  if (raw === null) return DEFAULT_LIST_LIMIT;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIST_LIMIT) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to ${MAX_LIST_LIMIT}.`, {
      param: "limit",
    });
  }
  return Number(raw);
}

/** GET /c1/conversations?limit=&after= */
export async function handleListC1Conversations(request: Request, store: C1Store): Promise<Response> {
  const url = new URL(request.url);
  const limit = limitOf(url);
  const after = url.searchParams.get("after") ?? undefined;
  const page = await store.list(callerOf(request).keyId, after === undefined ? { limit } : { limit, after });
  if (page === undefined)
    throw new InvalidRequestError(`Invalid 'after': no conversation found with id '${after ?? ""}'.`, {
      param: "after",
    });
  return jsonResponse(conversationList(page));
}

/** GET /c1/conversations/{id} */
export async function handleGetC1Conversation(id: string, request: Request, store: C1Store): Promise<Response> {
  const conversation = await store.get(callerOf(request).keyId, id);
  if (conversation === undefined) throw notFound(id);
  return jsonResponse(conversationObject(conversation));
}

/** DELETE /c1/conversations/{id} */
export async function handleDeleteC1Conversation(id: string, request: Request, store: C1Store): Promise<Response> {
  if (!(await store.delete(callerOf(request).keyId, id))) throw notFound(id);
  return jsonResponse(conversationDeleted(id));
}
