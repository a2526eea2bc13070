// The items a request adds to an OpenAI conversation (`items` of POST /v1/conversations and of
// POST /v1/conversations/{id}/items, and a response's input and output): normalised and given ids
// as stored responses' input items are, `item_reference` items resolved to the caller's stored
// items, each checked as a Responses input item, and given the `status` the API lists items with.
import * as z from "zod";
import { inputItem } from "../../protocols/openai-responses/schema.js";
import { isRecord, ownItems, type ItemSource, type StoredItem } from "../items/items.js";
import { parseRequest } from "../../core/validation.js";

/** At most this many items per request, as OpenAI's API allows. */
export const MAX_ITEMS_PER_REQUEST = 20;

/** Item types that carry a `status` when listed. */
const WITH_STATUS = new Set(["message", "function_call", "function_call_output"]);

/** The item as a conversation keeps it: with `status` (completed unless it says otherwise). */
export function asConversationItem(item: StoredItem): StoredItem {
  return WITH_STATUS.has(String(item["type"])) && typeof item["status"] !== "string"
    ? { ...item, status: "completed" }
    : item;
}

/** An item's own id, where it brings one: a non-empty string. */
const itemWithId = z.unknown().superRefine((item, ctx) => {
  if (!isRecord(item) || item["id"] === undefined || (typeof item["id"] === "string" && item["id"] !== "")) return;
  ctx.addIssue({ code: "custom", path: ["id"], message: "expected an item id (a non-empty string)" });
});

const itemsField = (min: number) =>
  z
    .array(itemWithId, { error: "expected an array of items" })
    .min(min, { error: "at least one item is required" })
    .max(MAX_ITEMS_PER_REQUEST, { error: `at most ${MAX_ITEMS_PER_REQUEST} items may be added at a time` });

/**
 * The request's `items` (absent: none, where `min` is 0), ready to store. Errors name
 * `items[i]…`; nothing is stored when one is refused.
 */
export async function requestItems(
  fields: Record<string, unknown>,
  min: 0 | 1,
  sources: ItemSource,
  owner: string,
  newId: () => string,
): Promise<StoredItem[]> {
  const { items } = parseRequest(z.object({ items: min === 0 ? itemsField(0).nullish() : itemsField(1) }), fields);
  if (items == null || items.length === 0) return [];
  const resolved = (await ownItems(items, sources, owner, newId, "items")) as unknown[];
  // A compaction_trigger asks for a compaction in the request it ends; kept, it would end no request.
  const storable = inputItem.refine((item) => item.type !== "compaction_trigger", {
    error: "a 'compaction_trigger' item cannot be kept in a conversation: send it last in a /v1/responses input",
    path: ["type"],
  });
  parseRequest(z.object({ items: z.array(storable) }), { items: resolved });
  return (resolved as StoredItem[]).map(asConversationItem);
}
