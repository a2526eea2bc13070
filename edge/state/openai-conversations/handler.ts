// POST /v1/conversations, and GET, POST (metadata) and DELETE /v1/conversations/{id}: OpenAI's
// Conversations API on the store (docs/contract.md, "OpenAI conversations"). Only the caller's
// own conversations: another key's are not found.
import * as z from "zod";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import type { ItemSource } from "../items/items.js";
import type { ConversationStore } from "./store.js";
import { parseRequest } from "../../core/validation.js";
import { conversationDeleted, conversationObject } from "./encoder.js";
import { requestItems } from "./conversation-items.js";
import { bodyOf, conversationNotFound, conversationOf, ownerOf } from "./lookup.js";
import { optionalMetadata, requiredMetadata } from "./metadata.js";

/** The conversation id prefix, as OpenAI's (and /c1's) conversations have it. */
export const CONVERSATION_ID_PREFIX = "conv_";

/** POST /v1/conversations {items?, metadata?} */
export async function handleCreateConversation(
  request: Request,
  context: AppContext,
  store: ConversationStore,
  sources: ItemSource,
): Promise<Response> {
  const raw = await bodyOf(request, context.maxBodyBytes);
  const { metadata } = parseRequest(z.object({ metadata: optionalMetadata }), raw);
  const owner = ownerOf(request);
  const items = await requestItems(raw, 0, sources, owner, context.newId);
  const conversation = { id: `${CONVERSATION_ID_PREFIX}${context.newId()}`, createdAt: context.now(), metadata };
  await store.createConversation({ ...conversation, owner, items });
  return jsonResponse(conversationObject(conversation));
}

/** GET /v1/conversations/{id} */
export async function handleGetConversation(id: string, request: Request, store: ConversationStore): Promise<Response> {
  return jsonResponse(conversationObject(await conversationOf(store, request, id)));
}

/** POST /v1/conversations/{id} {metadata}: replaces the metadata. */
export async function handleUpdateConversation(
  id: string,
  request: Request,
  context: AppContext,
  store: ConversationStore,
): Promise<Response> {
  const raw = await bodyOf(request, context.maxBodyBytes);
  const { metadata } = parseRequest(z.object({ metadata: requiredMetadata }), raw);
  const updated = await store.updateConversation(ownerOf(request), id, metadata);
  if (updated === undefined) throw conversationNotFound(id);
  return jsonResponse(conversationObject(updated));
}

/** DELETE /v1/conversations/{id}: the conversation and its items. */
export async function handleDeleteConversation(
  id: string,
  request: Request,
  store: ConversationStore,
): Promise<Response> {
  if (!(await store.deleteConversation(ownerOf(request), id))) throw conversationNotFound(id);
  return jsonResponse(conversationDeleted(id));
}
