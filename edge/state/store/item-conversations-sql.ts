// Conversations of Responses items in SQL (migrations/0003_item_conversations.sql), the same on
// D1 and on SQLite. Appending is one batch: the conversation's `next_seq` moves on by the count and
// the items take the positions it moved over, so two appends never interleave and a conversation
// deleted meanwhile gets nothing.
import type { SqlDriver, SqlStatement, SqlValue } from "./sql.js";
import type { ConversationMetadata, ItemConversation, NewItemConversation } from "./item-conversations.js";
import type { StoredItem } from "./store.js";

const sql = (text: string, ...params: SqlValue[]): SqlStatement => ({ sql: text, params });

const parse = <T>(value: unknown): T => JSON.parse(String(value)) as T;

function conversationOf(row: Record<string, unknown>): ItemConversation {
  return { id: String(row["id"]), createdAt: Number(row["created_at"]), metadata: parse<ConversationMetadata>(row["metadata"]) };
}

/** The item inserts of an append: each takes its place below the moved-on `next_seq`. */
function itemInserts(owner: string, id: string, items: readonly StoredItem[]): SqlStatement[] {
  return items.map((item, i) =>
    sql(
      "INSERT INTO conversation_items (conversation_id, seq, id, item) SELECT id, next_seq - ?, ?, ? FROM item_conversations WHERE id = ? AND owner = ?",
      items.length - i,
      String(item["id"]),
      JSON.stringify(item),
      id,
      owner,
    ),
  );
}

export async function createItemConversation(driver: SqlDriver, conversation: NewItemConversation): Promise<void> {
  const { id, owner } = conversation;
  await driver.batch([
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

export async function getItemConversation(driver: SqlDriver, owner: string, id: string): Promise<ItemConversation | undefined> {
  const [row] = await driver.all(sql("SELECT id, created_at, metadata FROM item_conversations WHERE id = ? AND owner = ?", id, owner));
  return row === undefined ? undefined : conversationOf(row);
}

export async function updateItemConversation(driver: SqlDriver, owner: string, id: string, metadata: ConversationMetadata): Promise<ItemConversation | undefined> {
  const [changed] = await driver.batch([sql("UPDATE item_conversations SET metadata = ? WHERE id = ? AND owner = ?", JSON.stringify(metadata), id, owner)]);
  return changed === 1 ? getItemConversation(driver, owner, id) : undefined;
}

export async function deleteItemConversation(driver: SqlDriver, owner: string, id: string): Promise<boolean> {
  const changed = await driver.batch([
    sql("DELETE FROM conversation_items WHERE conversation_id = ? AND EXISTS (SELECT 1 FROM item_conversations WHERE id = ? AND owner = ?)", id, id, owner),
    sql("DELETE FROM item_conversations WHERE id = ? AND owner = ?", id, owner),
  ]);
  return (changed[1] ?? 0) > 0;
}

export async function conversationItems(driver: SqlDriver, owner: string, id: string): Promise<StoredItem[] | undefined> {
  if ((await getItemConversation(driver, owner, id)) === undefined) return undefined;
  const rows = await driver.all(sql("SELECT item FROM conversation_items WHERE conversation_id = ? ORDER BY seq", id));
  return rows.map((row) => parse<StoredItem>(row["item"]));
}

export async function appendConversationItems(driver: SqlDriver, owner: string, id: string, items: readonly StoredItem[]): Promise<boolean> {
  const [moved] = await driver.batch([
    sql("UPDATE item_conversations SET next_seq = next_seq + ? WHERE id = ? AND owner = ?", items.length, id, owner),
    ...itemInserts(owner, id, items),
  ]);
  return moved === 1;
}

export async function deleteConversationItem(driver: SqlDriver, owner: string, id: string, itemId: string): Promise<boolean> {
  const [changed] = await driver.batch([
    sql("DELETE FROM conversation_items WHERE conversation_id = ? AND id = ? AND EXISTS (SELECT 1 FROM item_conversations WHERE id = ? AND owner = ?)", id, itemId, id, owner),
  ]);
  return (changed ?? 0) > 0;
}

/** An item of one of `owner`'s conversations, by id (for `item_reference`). */
export async function getConversationItemById(driver: SqlDriver, owner: string, itemId: string): Promise<StoredItem | undefined> {
  const [row] = await driver.all(
    sql("SELECT i.item FROM conversation_items i JOIN item_conversations c ON c.id = i.conversation_id WHERE i.id = ? AND c.owner = ? LIMIT 1", itemId, owner),
  );
  return row === undefined ? undefined : parse<StoredItem>(row["item"]);
}
