// The JSON shapes of OpenAI's Conversations API: the conversation object, its deletion, item lists
// and pages. Times are Unix seconds.
import { sealReasoning } from "../../protocols/openai-responses/encrypted-reasoning.js";
import { InvalidRequestError } from "../../base/errors.js";
import type { StoredItem } from "../items/items.js";
import type { PageOptions } from "../items/page.js";
import type { OpenAiConversation } from "./store.js";

export function conversationObject(conversation: OpenAiConversation): Record<string, unknown> {
  return {
    id: conversation.id,
    object: "conversation",
    created_at: Math.floor(conversation.createdAt / 1000),
    metadata: conversation.metadata,
  };
}

export function conversationDeleted(id: string): Record<string, unknown> {
  return { id, object: "conversation.deleted", deleted: true };
}

/** `include: ["reasoning.encrypted_content"]`: reasoning items carry their text sealed, as Responses do. */
export function withIncluded(item: StoredItem, sealed: boolean): StoredItem {
  if (
    !sealed ||
    item["type"] !== "reasoning" ||
    typeof item["encrypted_content"] === "string" ||
    !Array.isArray(item["content"])
  )
    return item;
  const text = (item["content"] as unknown[])
    .map((part) => (typeof part === "object" && part !== null ? String((part as { text?: unknown }).text ?? "") : ""))
    .join("");
  return { ...item, encrypted_content: sealReasoning(text) };
}

/** The items a request added, in order: one list, never paged. */
export function itemList(items: readonly StoredItem[]): Record<string, unknown> {
  return {
    object: "list",
    data: items,
    first_id: items[0]?.["id"] ?? null,
    last_id: items.at(-1)?.["id"] ?? null,
    has_more: false,
  };
}

/** One page of a conversation's items (`order`, `limit`, `after`). */
export function itemsPage(items: readonly StoredItem[], options: PageOptions): Record<string, unknown> {
  const ordered = options.order === "asc" ? [...items] : [...items].reverse();
  let start = 0;
  if (options.after !== undefined) {
    const at = ordered.findIndex((item) => item["id"] === options.after);
    if (at < 0)
      throw new InvalidRequestError(`Invalid 'after': no item with id '${options.after}' in this conversation.`, {
        param: "after",
      });
    start = at + 1;
  }
  const data = ordered.slice(start, start + options.limit);
  return { ...itemList(data), has_more: start + options.limit < ordered.length };
}
