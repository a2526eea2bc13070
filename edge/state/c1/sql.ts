// /c1's conversations in SQL (migrations/0001_conversations.sql), the same on D1 and on SQLite
// (state/store/): a turn is stored whole or not at all, only if the conversation still counts the
// messages it began with.
import { sql, type SqlDriver, type SqlStatement } from "../store/driver.js";
import {
  TurnConflictError,
  type C1Store,
  type Conversation,
  type ConversationInfo,
  type ConversationPage,
  type StoredMessage,
  type Turn,
} from "./store.js";

function infoOf(row: Record<string, unknown>): ConversationInfo {
  return {
    id: String(row["id"]),
    createdAt: Number(row["created_at"]),
    updatedAt: Number(row["updated_at"]),
    messageCount: Number(row["message_count"]),
  };
}

const INFO_COLUMNS = "id, created_at, updated_at, message_count";

/** A constraint that failed inside a batch: a turn raced another one (D1 and SQLite word it alike). */
function isConstraintFailure(error: unknown): boolean {
  return /constraint failed/i.test(error instanceof Error ? error.message : String(error));
}

/** The statements that store a turn's messages, each only if the conversation now counts `count`. */
function messageInserts(turn: Turn, count: number): SqlStatement[] {
  return turn.messages.map((message, i) =>
    sql(
      "INSERT INTO conversation_messages (conversation_id, seq, message) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM " +
        "conversations WHERE id = ? AND owner = ? AND message_count = ?)",
      turn.conversationId,
      turn.base + i,
      JSON.stringify(message),
      turn.conversationId,
      turn.owner,
      count,
    ),
  );
}

/** The turn's first statement: create the conversation, or move its count from `base` on. */
function headOf(turn: Turn, count: number): SqlStatement {
  if (turn.base === 0) {
    return sql(
      "INSERT INTO conversations (id, owner, created_at, updated_at, message_count) VALUES (?, ?, ?, ?, ?)",
      turn.conversationId,
      turn.owner,
      turn.at,
      turn.at,
      count,
    );
  }
  return sql(
    "UPDATE conversations SET updated_at = ?, message_count = ? WHERE id = ? AND owner = ? AND message_count = ?",
    turn.at,
    count,
    turn.conversationId,
    turn.owner,
    turn.base,
  );
}

export class SqlC1Store implements C1Store {
  constructor(private readonly driver: SqlDriver) {}

  async get(owner: string, id: string): Promise<Conversation | undefined> {
    const [row] = await this.driver.all(
      sql(`SELECT ${INFO_COLUMNS} FROM conversations WHERE id = ? AND owner = ?`, id, owner),
    );
    if (row === undefined) return undefined;
    const info = infoOf(row);
    const rows = await this.driver.all(
      sql(
        "SELECT message FROM conversation_messages WHERE conversation_id = ? AND seq < ? ORDER BY seq",
        id,
        info.messageCount,
      ),
    );
    const messages = rows.map((r) => JSON.parse(String(r["message"])) as StoredMessage);
    return { ...info, messages };
  }

  async list(owner: string, options: { limit: number; after?: string }): Promise<ConversationPage | undefined> {
    let rows: Record<string, unknown>[];
    if (options.after === undefined) {
      rows = await this.driver.all(
        sql(
          `SELECT ${INFO_COLUMNS} FROM conversations WHERE owner = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
          owner,
          options.limit + 1,
        ),
      );
    } else {
      const [cursor] = await this.driver.all(
        sql("SELECT created_at FROM conversations WHERE id = ? AND owner = ?", options.after, owner),
      );
      if (cursor === undefined) return undefined;
      const created = Number(cursor["created_at"]);
      rows = await this.driver.all(
        sql(
          `SELECT ${INFO_COLUMNS} FROM conversations WHERE owner = ? AND (created_at < ? OR (created_at = ? AND id < ` +
            `?)) ORDER BY ` +
            `created_at DESC, id DESC LIMIT ?`,
          owner,
          created,
          created,
          options.after,
          options.limit + 1,
        ),
      );
    }
    return { items: rows.slice(0, options.limit).map(infoOf), hasMore: rows.length > options.limit };
  }

  async commit(turn: Turn): Promise<void> {
    const count = turn.base + turn.messages.length;
    let changed: number[];
    try {
      changed = await this.driver.batch([headOf(turn, count), ...messageInserts(turn, count)]);
    } catch (error) {
      if (isConstraintFailure(error)) throw new TurnConflictError(turn.conversationId);
      throw error;
    }
    // No row moved from `base`: another turn came first, or the conversation was deleted; the
    // inserts were conditional on the move, so nothing was written.
    if (changed[0] !== 1) throw new TurnConflictError(turn.conversationId);
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const changed = await this.driver.batch([
      sql(
        "DELETE FROM conversation_messages WHERE conversation_id = ? AND EXISTS (SELECT 1 FROM conversations WHERE " +
          "id = ? AND owner = ?)",
        id,
        id,
        owner,
      ),
      sql("DELETE FROM conversations WHERE id = ? AND owner = ?", id, owner),
    ]);
    return (changed[1] ?? 0) > 0;
  }
}
