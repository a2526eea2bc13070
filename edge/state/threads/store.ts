// What /v1/messages keeps between requests on a server with a store: Anthropic message threads, a
// row per turn (docs/contract.md, "Anthropic message threads"). One interface, its SQL in sql.ts
// over either driver (state/store/). Every call names the owner: another owner's thread is not found.

/** A stored message, as Anthropic's Messages API spells it (`role`, `content`). */
export type ThreadMessage = Readonly<Record<string, unknown>>;

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
  readonly messages: readonly ThreadMessage[];
}

/** A thread as a continue finds it: what its creating turn fixed, and every message so far. */
export interface StoredThread {
  readonly fixed: Readonly<Record<string, unknown>>;
  readonly messages: readonly ThreadMessage[];
}

/** Anthropic message threads. */
export interface ThreadStore {
  /** The thread up to and including the reply `messageId`; undefined if unknown or another owner's. */
  getThread(owner: string, messageId: string): Promise<StoredThread | undefined>;
  /** Stores one turn of a thread, whole or not at all. */
  putThreadTurn(turn: ThreadTurn): Promise<void>;
}
