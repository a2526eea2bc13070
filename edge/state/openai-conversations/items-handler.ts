// GET and POST /v1/conversations/{id}/items, GET and DELETE /v1/conversations/{id}/items/{item_id}
// (docs/contract.md, "OpenAI conversations"). Only the caller's own conversations.
import type { AppContext } from "../../core/context.js";
import { NotFoundError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import type { ItemSource, StoredItem } from "../items/items.js";
import { pageOptions } from "../items/page.js";
import type { ConversationStore } from "./store.js";
import { conversationObject, itemList, itemsPage, withIncluded } from "./encoder.js";
import { requestItems } from "./conversation-items.js";
import { bodyOf, conversationNotFound, conversationOf, ownerOf, sealedReasoning } from "./lookup.js";

function itemNotFound(id: string): NotFoundError {
  return new NotFoundError(`Item with id '${id}' not found.`, { code: "item_not_found" });
}

async function itemsOf(store: ConversationStore, request: Request, id: string): Promise<StoredItem[]> {
  const items = await store.conversationItems(ownerOf(request), id);
  if (items === undefined) throw conversationNotFound(id);
  return items;
}

/** GET /v1/conversations/{id}/items?limit=&order=&after=&include[]= (newest first by default). */
export async function handleListItems(id: string, request: Request, store: ConversationStore): Promise<Response> {
  const url = new URL(request.url);
  const options = pageOptions(url);
  const sealed = sealedReasoning(url);
  const items = await itemsOf(store, request, id);
  return jsonResponse(
    itemsPage(
      items.map((item) => withIncluded(item, sealed)),
      options,
    ),
  );
}

/** POST /v1/conversations/{id}/items {items}: appended in order, all or none. */
export async function handleCreateItems(
  id: string,
  request: Request,
  context: AppContext,
  store: ConversationStore,
  sources: ItemSource,
): Promise<Response> {
  const sealed = sealedReasoning(new URL(request.url));
  const owner = ownerOf(request);
  await conversationOf(store, request, id);
  const items = await requestItems(await bodyOf(request, context.maxBodyBytes), 1, sources, owner, context.newId);
  if (!(await store.appendConversationItems(owner, id, items))) throw conversationNotFound(id);
  return jsonResponse(itemList(items.map((item) => withIncluded(item, sealed))));
}

/** GET /v1/conversations/{id}/items/{item_id} */
export async function handleGetItem(
  id: string,
  itemId: string,
  request: Request,
  store: ConversationStore,
): Promise<Response> {
  const sealed = sealedReasoning(new URL(request.url));
  const item = (await itemsOf(store, request, id)).findLast((candidate) => candidate["id"] === itemId);
  if (item === undefined) throw itemNotFound(itemId);
  return jsonResponse(withIncluded(item, sealed));
}

/** DELETE /v1/conversations/{id}/items/{item_id}: answers the conversation, as OpenAI's API does. */
export async function handleDeleteItem(
  id: string,
  itemId: string,
  request: Request,
  store: ConversationStore,
): Promise<Response> {
  const conversation = await conversationOf(store, request, id);
  if (!(await store.deleteConversationItem(ownerOf(request), id, itemId))) throw itemNotFound(itemId);
  return jsonResponse(conversationObject(conversation));
}
