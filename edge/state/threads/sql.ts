// Anthropic message threads in SQL (migrations/0004_message_threads.sql), the same on D1 and on
// SQLite: a row per turn, named by its reply's id and linked to the turn it continued. A thread is
// read in one recursive query from the reply a continue names up to the turn that created it.
import { parse, sql, type SqlDriver } from "../store/driver.js";
import type { StoredThread, ThreadMessage, ThreadStore, ThreadTurn } from "./store.js";

/** Every turn from `id` up to the thread's first, the caller's own only; the first turn last. */
const CHAIN = `WITH RECURSIVE chain (id, parent, fixed, messages, depth) AS (
  SELECT id, parent, fixed, messages, 0 FROM thread_turns WHERE id = ? AND owner = ?
  UNION ALL
  SELECT t.id, t.parent, t.fixed, t.messages, chain.depth + 1
  FROM thread_turns AS t JOIN chain ON t.id = chain.parent WHERE t.owner = ?
)
SELECT parent, fixed, messages FROM chain ORDER BY depth DESC`;

export class SqlThreadStore implements ThreadStore {
  constructor(private readonly driver: SqlDriver) {}

  async getThread(owner: string, messageId: string): Promise<StoredThread | undefined> {
    const rows = await this.driver.all(sql(CHAIN, messageId, owner, owner));
    const first = rows[0];
    // Unknown, another owner's, or a chain that does not reach the turn that created it.
    if (first === undefined || first["parent"] !== null || first["fixed"] === null) return undefined;
    return {
      fixed: parse<Record<string, unknown>>(first["fixed"]),
      messages: rows.flatMap((row) => parse<ThreadMessage[]>(row["messages"])),
    };
  }

  async putThreadTurn(turn: ThreadTurn): Promise<void> {
    await this.driver.batch([
      sql(
        "INSERT INTO thread_turns (id, owner, parent, created_at, fixed, messages) VALUES (?, ?, ?, ?, ?, ?)",
        turn.id,
        turn.owner,
        turn.parent,
        turn.createdAt,
        turn.fixed === undefined ? null : JSON.stringify(turn.fixed),
        JSON.stringify(turn.messages),
      ),
    ]);
  }
}
