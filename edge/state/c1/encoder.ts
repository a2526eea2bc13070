// The JSON shapes of /c1/conversations (docs/contract.md, "Conversations"). Times are Unix
// seconds, as `created` is everywhere else in the OpenAI family.
import type { Conversation, ConversationInfo, ConversationPage } from "./store.js";

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** A conversation without its messages: a list's item. */
export function conversationSummary(info: ConversationInfo): Record<string, unknown> {
  return {
    id: info.id,
    object: "conversation",
    created_at: seconds(info.createdAt),
    updated_at: seconds(info.updatedAt),
    message_count: info.messageCount,
  };
}

/** GET /c1/conversations/{id}: the metadata and every message, in order. */
export function conversationObject(conversation: Conversation): Record<string, unknown> {
  return { ...conversationSummary(conversation), messages: conversation.messages };
}

/** GET /c1/conversations: one page, newest first. */
export function conversationList(page: ConversationPage): Record<string, unknown> {
  return {
    object: "list",
    data: page.items.map(conversationSummary),
    first_id: page.items[0]?.id ?? null,
    last_id: page.items.at(-1)?.id ?? null,
    has_more: page.hasMore,
  };
}

export function conversationDeleted(id: string): Record<string, unknown> {
  return { id, object: "conversation.deleted", deleted: true };
}
