// Conversations of Responses items in SQL (migrations/0003_item_conversations.sql), the same on
// D1 and on SQLite. Appending is one batch: the conversation's `next_seq` moves on by the count and
// the items take the positions it moved over, so two appends never interleave and a conversation
// deleted meanwhile gets nothing.
import type { StoredItem } from "../items/items.js";
import { parse, sql, type SqlDriver, type SqlStatement } from "../store/driver.js";
import type { ConversationMetadata, ConversationStore, NewOpenAiConversation, OpenAiConversation } from "./store.js";

function conversationOf(row: Record<string, unknown>): OpenAiConversation {
  return {
    id: String(row["id"]),
    createdAt: Number(row["created_at"]),
    metadata: parse<ConversationMetadata>(row["metadata"]),
  };
}

/** The item inserts of an append: each takes its place below the moved-on `next_seq`. */
function itemInserts(owner: string, id: string, items: readonly StoredItem[]): SqlStatement[] {
  return items.map((item, i) =>
    sql(
      "INSERT INTO conversation_items (conversation_id, seq, id, item) SELECT id, next_seq - ?, ?, ? FROM " +
        "item_conversations WHERE id = ? AND owner = ?",
      items.length - i,
      String(item["id"]),
      JSON.stringify(item),
      id,
      owner,
    ),
  );
}

/** An item of one of `owner`'s conversations, by id (for `item_reference`). */
export async function getConversationItemById(
  driver: SqlDriver,
  owner: string,
  itemId: string,
): Promise<StoredItem | undefined> {
  const [row] = await driver.all(
    sql(
      "SELECT i.item FROM conversation_items i JOIN item_conversations c ON c.id = i.conversation_id WHERE i.id = ? " +
        "AND c.owner = ? LIMIT 1",
      itemId,
      owner,
    ),
  );
  return row === undefined ? undefined : parse<StoredItem>(row["item"]);
}

export class SqlConversationStore implements ConversationStore {
  constructor(private readonly driver: SqlDriver) {}

  async createConversation(conversation: NewOpenAiConversation): Promise<void> {
    const { id, owner } = conversation;
    await this.driver.batch([
      sql(
        "INSERT INTO item_conversations (id, owner, created_at, metadata, next_seq) VALUES (?, ?, ?, ?, ?)",
        id,
        owner,
        conversation.createdAt,
        JSON.stringify(conversation.metadata),
        conversation.items.length,
      ),
      ...itemInserts(owner, id, conversation.items),
    ]);
  }

  async getConversation(owner: string, id: string): Promise<OpenAiConversation | undefined> {
    const [row] = await this.driver.all(
      sql("SELECT id, created_at, metadata FROM item_conversations WHERE id = ? AND owner = ?", id, owner),
    );
    return row === undefined ? undefined : conversationOf(row);
  }

  async updateConversation(
    owner: string,
    id: string,
    metadata: ConversationMetadata,
  ): Promise<OpenAiConversation | undefined> {
    const [changed] = await this.driver.batch([
      sql("UPDATE item_conversations SET metadata = ? WHERE id = ? AND owner = ?", JSON.stringify(metadata), id, owner),
    ]);
    return changed === 1 ? this.getConversation(owner, id) : undefined;
  }

  async deleteConversation(owner: string, id: string): Promise<boolean> {
    const changed = await this.driver.batch([
      sql(
        "DELETE FROM conversation_items WHERE conversation_id = ? AND EXISTS (SELECT 1 FROM item_conversations WHERE " +
          "id = ? AND owner = ?)",
        id,
        id,
        owner,
      ),
      sql("DELETE FROM item_conversations WHERE id = ? AND owner = ?", id, owner),
    ]);
    return (changed[1] ?? 0) > 0;
  }

  async conversationItems(owner: string, id: string): Promise<StoredItem[] | undefined> {
    if ((await this.getConversation(owner, id)) === undefined) return undefined;
    const rows = await this.driver.all(
      sql("SELECT item FROM conversation_items WHERE conversation_id = ? ORDER BY seq", id),
    );
    return rows.map((row) => parse<StoredItem>(row["item"]));
  }

  async appendConversationItems(owner: string, id: string, items: readonly StoredItem[]): Promise<boolean> {
    const [moved] = await this.driver.batch([
      sql("UPDATE item_conversations SET next_seq = next_seq + ? WHERE id = ? AND owner = ?", items.length, id, owner),
      ...itemInserts(owner, id, items),
    ]);
    return moved === 1;
  }

  async deleteConversationItem(owner: string, id: string, itemId: string): Promise<boolean> {
    const [changed] = await this.driver.batch([
      sql(
        "DELETE FROM conversation_items WHERE conversation_id = ? AND id = ? AND EXISTS (SELECT 1 FROM " +
          "item_conversations WHERE id = ? AND owner = ?)",
        id,
        itemId,
        id,
        owner,
      ),
    ]);
    return (changed ?? 0) > 0;
  }
}
