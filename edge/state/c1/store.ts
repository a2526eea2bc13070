// What /c1 keeps between requests: its conversations (docs/contract.md, "Conversations"). One
// interface, its SQL in sql.ts over either driver (state/store/). Every call names the owner:
// another owner's conversation is not found, never returned.

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

/** `/c1`'s conversations. */
export interface C1Store {
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
}
