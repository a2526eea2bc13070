// What the edge keeps between requests: conversations for /c1 (docs/contract.md, "Conversations").
// One interface, one SQL implementation (sql.ts) over two drivers: D1 under workerd (d1.ts) and
// SQLite on Node (edge/node/sqlite-store.ts). Every call names the owner: another owner's object
// is not found, never returned.

import type { ItemConversationStore } from "./item-conversations.js";

/** A stored chat message, as chat completions spell it (`role`, `content`, `tool_calls`, …). */
export type StoredMessage = Readonly<Record<string, unknown>>;

export interface ConversationInfo {
  readonly id: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly messageCount: number;
}

export interface Conversation extends ConversationInfo {
  readonly messages: readonly StoredMessage[];
}

export interface ConversationPage {
  /** Newest first. */
  readonly items: readonly ConversationInfo[];
  readonly hasMore: boolean;
}

/** One finished turn: the messages it adds, after the `base` messages the conversation had. */
export interface Turn {
  readonly owner: string;
  readonly conversationId: string;
  /** Messages already stored when the turn began (0: the turn creates the conversation). */
  readonly base: number;
  readonly messages: readonly StoredMessage[];
  /** Milliseconds since the Unix epoch. */
  readonly at: number;
}

/** Another turn of the same conversation was committed since this one began. */
export class TurnConflictError extends Error {
  constructor(readonly conversationId: string) {
    super(`conversation ${conversationId} changed while this turn was generated`);
    this.name = "TurnConflictError";
  }
}

/** A stored Responses item (an input or output item, as the Responses API spells it, with its `id`). */
export type StoredItem = Readonly<Record<string, unknown>>;

/** A finished Response kept for `previous_response_id`, retrieval and `item_reference`. */
export interface StoredResponse {
  readonly id: string;
  readonly owner: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  /** The Response object as it was answered. */
  readonly response: Readonly<Record<string, unknown>>;
  /** The request's own input items (instructions not among them). */
  readonly inputItems: readonly StoredItem[];
  /** Every input item the model saw: the chain's input and output, then `inputItems`. */
  readonly context: readonly StoredItem[];
}

/** One stored turn of an Anthropic message thread, named by its reply's message id. */
export interface ThreadTurn {
  /** The reply's message id (`msg_…`). */
  readonly id: string;
  readonly owner: string;
  /** The reply this turn continued; null for the turn that created the thread. */
  readonly parent: string | null;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  /** The creating turn's `system` and `tools`, kept for every later turn; undefined on a continue. */
  readonly fixed?: Readonly<Record<string, unknown>>;
  /** The turn's own messages, then the reply (Anthropic message params). */
  readonly messages: readonly StoredMessage[];
}

/** A thread as a continue finds it: what its creating turn fixed, and every message so far. */
export interface StoredThread {
  readonly fixed: Readonly<Record<string, unknown>>;
  readonly messages: readonly StoredMessage[];
}

/** `/c1` conversations, stored responses, OpenAI conversations (item-conversations.ts) and message threads. */
export interface ConversationStore extends ItemConversationStore {
  /** The conversation with its messages; undefined if unknown or another owner's. */
  get(owner: string, id: string): Promise<Conversation | undefined>;
  /**
   * `owner`'s conversations, newest first; `after` is the id the previous page ended with
   * (undefined when that id is unknown or another owner's).
   */
  list(owner: string, options: { limit: number; after?: string }): Promise<ConversationPage | undefined>;
  /** Stores a turn whole or not at all; throws TurnConflictError if `base` is no longer the count. */
  commit(turn: Turn): Promise<void>;
  /** Deletes the conversation and its messages; false if unknown or another owner's. */
  delete(owner: string, id: string): Promise<boolean>;
  /** The stored response; undefined if unknown or another owner's. */
  getResponse(owner: string, id: string): Promise<StoredResponse | undefined>;
  /** Stores a response with its input and output items, whole or not at all. */
  putResponse(response: StoredResponse): Promise<void>;
  /** Deletes the response and its items; false if unknown or another owner's. */
  deleteResponse(owner: string, id: string): Promise<boolean>;
  /** A stored input or output item of `owner`'s responses (else of `owner`'s OpenAI conversations), by its id. */
  getItem(owner: string, id: string): Promise<StoredItem | undefined>;
  /** The thread up to and including the reply `messageId`; undefined if unknown or another owner's. */
  getThread(owner: string, messageId: string): Promise<StoredThread | undefined>;
  /** Stores one turn of a thread, whole or not at all. */
  putThreadTurn(turn: ThreadTurn): Promise<void>;
}
