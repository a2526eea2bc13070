// Stored Responses in SQL (migrations/0002_responses.sql), the same on D1 and on SQLite: the
// Response row holds the object, its own input items and the whole context it was made from;
// every input and output item also gets a row by id, for `item_reference`.
import type { StoredItem } from "../items/items.js";
import { getConversationItemById } from "../openai-conversations/sql.js";
import { parse, sql, type SqlDriver } from "../store/driver.js";
import type { ResponseStore, StoredResponse } from "./store.js";

/** The items a stored response answers `item_reference` with: its input, then its output. */
function itemsOf(response: StoredResponse): StoredItem[] {
  const output = Array.isArray(response.response["output"]) ? (response.response["output"] as StoredItem[]) : [];
  return [...response.inputItems, ...output].filter((item) => typeof item["id"] === "string");
}

export class SqlResponseStore implements ResponseStore {
  constructor(private readonly driver: SqlDriver) {}

  async getResponse(owner: string, id: string): Promise<StoredResponse | undefined> {
    const [row] = await this.driver.all(
      sql("SELECT created_at, response, input_items, context FROM responses WHERE id = ? AND owner = ?", id, owner),
    );
    if (row === undefined) return undefined;
    return {
      id,
      owner,
      createdAt: Number(row["created_at"]),
      response: parse<Record<string, unknown>>(row["response"]),
      inputItems: parse<StoredItem[]>(row["input_items"]),
      context: parse<StoredItem[]>(row["context"]),
    };
  }

  async putResponse(response: StoredResponse): Promise<void> {
    const { id, owner } = response;
    await this.driver.batch([
      sql(
        "INSERT INTO responses (id, owner, created_at, response, input_items, context) VALUES (?, ?, ?, ?, ?, ?)",
        id,
        owner,
        response.createdAt,
        JSON.stringify(response.response),
        JSON.stringify(response.inputItems),
        JSON.stringify(response.context),
      ),
      ...itemsOf(response).map((item) =>
        sql(
          "INSERT OR REPLACE INTO response_items (response_id, id, owner, item) VALUES (?, ?, ?, ?)",
          id,
          String(item["id"]),
          owner,
          JSON.stringify(item),
        ),
      ),
    ]);
  }

  async deleteResponse(owner: string, id: string): Promise<boolean> {
    const changed = await this.driver.batch([
      sql("DELETE FROM response_items WHERE response_id = ? AND owner = ?", id, owner),
      sql("DELETE FROM responses WHERE id = ? AND owner = ?", id, owner),
    ]);
    return (changed[1] ?? 0) > 0;
  }

  async getItem(owner: string, id: string): Promise<StoredItem | undefined> {
    const [row] = await this.driver.all(
      sql("SELECT item FROM response_items WHERE owner = ? AND id = ? LIMIT 1", owner, id),
    );
    return row === undefined ? getConversationItemById(this.driver, owner, id) : parse<StoredItem>(row["item"]);
  }
}
