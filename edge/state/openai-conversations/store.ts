// What OpenAI's Conversations API keeps: conversations of Responses items (messages, function calls
// and their outputs, reasoning), each item with its id, in order. One interface, its SQL in sql.ts
// over either driver (state/store/). Every call names the owner: another owner's conversation is
// not found, never returned.
import type { StoredItem } from "../items/items.js";

export type ConversationMetadata = Readonly<Record<string, string>>;

export interface OpenAiConversation {
  readonly id: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  readonly metadata: ConversationMetadata;
}

export interface NewOpenAiConversation extends OpenAiConversation {
  readonly owner: string;
  /** Its first items, in order (each with its `id`). */
  readonly items: readonly StoredItem[];
}

export interface ConversationStore {
  /** Creates the conversation with its first items, whole or not at all. */
  createConversation(conversation: NewOpenAiConversation): Promise<void>;
  /** The conversation; undefined if unknown or another owner's. */
  getConversation(owner: string, id: string): Promise<OpenAiConversation | undefined>;
  /** Replaces its metadata; undefined if unknown or another owner's. */
  updateConversation(
    owner: string,
    id: string,
    metadata: ConversationMetadata,
  ): Promise<OpenAiConversation | undefined>;
  /** Deletes the conversation and its items; false if unknown or another owner's. */
  deleteConversation(owner: string, id: string): Promise<boolean>;
  /** Every item, oldest first; undefined if the conversation is unknown or another owner's. */
  conversationItems(owner: string, id: string): Promise<StoredItem[] | undefined>;
  /** Appends items at the end, all or none; false if the conversation is unknown or another owner's. */
  appendConversationItems(owner: string, id: string, items: readonly StoredItem[]): Promise<boolean>;
  /** Deletes the item with that id; false if there is none (or the conversation is not the owner's). */
  deleteConversationItem(owner: string, id: string, itemId: string): Promise<boolean>;
}
