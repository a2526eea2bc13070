// Files, batches and their lines in SQL (migrations/0005_batches.sql), the same on D1 and on SQLite.
// A line's result is written by the statement that ends its `pending` state, so it is written once.
import { parse, sql, type SqlDriver, type SqlStatement } from "../store/driver.js";
import type {
  BatchApi,
  BatchLine,
  BatchRecord,
  BatchStatus,
  BatchStore,
  FileRecord,
  LineCounts,
  LineResult,
  LineState,
  Page,
} from "./store.js";

function fileOf(row: Record<string, unknown>): FileRecord {
  return {
    id: String(row["id"]),
    owner: String(row["owner"]),
    createdAt: Number(row["created_at"]),
    filename: String(row["filename"]),
    purpose: String(row["purpose"]) as FileRecord["purpose"],
    bytes: Number(row["bytes"]),
  };
}

function batchOf(row: Record<string, unknown>): BatchRecord {
  const text = (value: unknown) => (value == null ? null : String(value));
  return {
    id: String(row["id"]),
    owner: String(row["owner"]),
    api: String(row["api"]) as BatchApi,
    endpoint: String(row["endpoint"]),
    inputFileId: text(row["input_file_id"]),
    status: String(row["status"]) as BatchStatus,
    createdAt: Number(row["created_at"]),
    expiresAt: Number(row["expires_at"]),
    times: parse<Record<string, number>>(row["times"]),
    metadata: row["metadata"] == null ? null : parse<Record<string, string>>(row["metadata"]),
    outputFileId: text(row["output_file_id"]),
    errorFileId: text(row["error_file_id"]),
    total: Number(row["total"]),
    touchedAt: Number(row["touched_at"] ?? 0),
  };
}

function lineOf(row: Record<string, unknown>): BatchLine {
  return {
    index: Number(row["idx"]),
    customId: row["custom_id"] == null ? null : String(row["custom_id"]),
    body: row["body"] == null ? null : parse<Record<string, unknown>>(row["body"]),
    state: String(row["state"]) as LineState,
    result: row["result"] == null ? null : parse<LineResult>(row["result"]),
    attempts: Number(row["attempts"] ?? 0),
  };
}

/**
 * Bytes of lines per INSERT: the lines go as one JSON array parameter (D1 binds at most 100
 * parameters, takes a string of at most 2 MB, and counts each statement against a Worker's
 * queries), read back row by row with `json_each`.
 */
const BYTES_PER_INSERT = 1024 * 1024;

const INSERT_LINES =
  "INSERT INTO batch_lines (batch_id, idx, custom_id, body, state, result) SELECT ?, json_extract(value, '$.i'), " +
  "json_extract(value, '$.c'), " +
  "json_extract(value, '$.b'), json_extract(value, '$.s'), json_extract(value, '$.r') FROM json_each(?)";

/** The INSERTs of `lines`, about BYTES_PER_INSERT of them each (a larger line alone). */
function insertLines(id: string, lines: readonly BatchLine[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (chunk.length > 0) statements.push(sql(INSERT_LINES, id, `[${chunk.join(",")}]`));
    [chunk, bytes] = [[], 0];
  };
  for (const line of lines) {
    const row = JSON.stringify({ i: line.index, c: line.customId, b: line.body, s: line.state, r: line.result });
    if (bytes + row.length > BYTES_PER_INSERT) flush();
    chunk.push(row);
    bytes += row.length;
  }
  flush();
  return statements;
}

/** One more row than a page holds: whether there is more. */
function paged<T>(rows: Record<string, unknown>[], limit: number, of: (row: Record<string, unknown>) => T): Page<T> {
  return { data: rows.slice(0, limit).map(of), hasMore: rows.length > limit };
}

const LIST_FILES =
  "SELECT * FROM files WHERE owner = ? AND (? IS NULL OR purpose = ?) AND (? IS NULL OR (created_at, id) %CMP% " +
  "(SELECT created_at, id FROM files WHERE id = ? AND owner = ?)) ORDER BY created_at %DIR%, id %DIR% LIMIT ?";

export class SqlBatchStore implements BatchStore {
  constructor(private readonly driver: SqlDriver) {}

  async putFile(file: FileRecord): Promise<void> {
    const { id, owner, createdAt, filename, purpose, bytes } = file;
    await this.driver.batch([
      sql(
        "INSERT OR REPLACE INTO files (id, owner, created_at, filename, purpose, bytes) VALUES (?, ?, ?, ?, ?, ?)",
        id,
        owner,
        createdAt,
        filename,
        purpose,
        bytes,
      ),
    ]);
  }

  async getFile(owner: string, id: string): Promise<FileRecord | undefined> {
    const [row] = await this.driver.all(sql("SELECT * FROM files WHERE id = ? AND owner = ?", id, owner));
    return row === undefined ? undefined : fileOf(row);
  }

  async listFiles(
    owner: string,
    options: { after?: string | undefined; limit: number; order: "asc" | "desc"; purpose?: string | undefined },
  ): Promise<Page<FileRecord>> {
    const text = LIST_FILES.replace("%CMP%", options.order === "asc" ? ">" : "<").replaceAll(
      "%DIR%",
      options.order === "asc" ? "ASC" : "DESC",
    );
    const purpose = options.purpose ?? null;
    const after = options.after ?? null;
    const rows = await this.driver.all(sql(text, owner, purpose, purpose, after, after, owner, options.limit + 1));
    return paged(rows, options.limit, fileOf);
  }

  async deleteFile(owner: string, id: string): Promise<boolean> {
    const [changed] = await this.driver.batch([sql("DELETE FROM files WHERE id = ? AND owner = ?", id, owner)]);
    return (changed ?? 0) > 0;
  }

  async createBatch(batch: BatchRecord, lines: readonly BatchLine[]): Promise<void> {
    const { id, owner, api, endpoint, inputFileId, status, createdAt, expiresAt, times, metadata, total, touchedAt } =
      batch;
    await this.driver.batch([
      sql(
        "INSERT INTO batches (id, owner, api, endpoint, input_file_id, status, created_at, expires_at, times, " +
          "metadata, total, touched_at) " +
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        id,
        owner,
        api,
        endpoint,
        inputFileId,
        status,
        createdAt,
        expiresAt,
        JSON.stringify(times),
        metadata === null ? null : JSON.stringify(metadata),
        total,
        touchedAt,
      ),
      ...insertLines(id, lines),
    ]);
  }

  async getBatch(owner: string, id: string): Promise<BatchRecord | undefined> {
    const [row] = await this.driver.all(sql("SELECT * FROM batches WHERE id = ? AND owner = ?", id, owner));
    return row === undefined ? undefined : batchOf(row);
  }

  async batchById(id: string): Promise<BatchRecord | undefined> {
    const [row] = await this.driver.all(sql("SELECT * FROM batches WHERE id = ?", id));
    return row === undefined ? undefined : batchOf(row);
  }

  async listBatches(
    owner: string,
    api: BatchApi,
    options: { after?: string | undefined; limit: number },
  ): Promise<Page<BatchRecord>> {
    const after = options.after ?? null;
    const rows = await this.driver.all(
      sql(
        "SELECT * FROM batches WHERE owner = ? AND api = ? AND " +
          "(? IS NULL OR (created_at, id) < (SELECT created_at, id FROM batches WHERE id = ? AND owner = ?)) ORDER " +
          "BY created_at DESC, id DESC LIMIT ?",
        owner,
        api,
        after,
        after,
        owner,
        options.limit + 1,
      ),
    );
    return paged(rows, options.limit, batchOf);
  }

  async unfinishedBatches(): Promise<string[]> {
    const rows = await this.driver.all(
      sql("SELECT id FROM batches WHERE status IN ('in_progress', 'finalizing', 'cancelling') ORDER BY created_at"),
    );
    return rows.map((row) => String(row["id"]));
  }

  async deleteBatch(owner: string, id: string): Promise<boolean> {
    const changed = await this.driver.batch([
      sql(
        "DELETE FROM batch_lines WHERE batch_id = ? AND EXISTS (SELECT 1 FROM batches WHERE id = ? AND owner = ?)",
        id,
        id,
        owner,
      ),
      sql("DELETE FROM batches WHERE id = ? AND owner = ?", id, owner),
    ]);
    return (changed[1] ?? 0) > 0;
  }

  async counts(id: string): Promise<LineCounts> {
    const rows = await this.driver.all(
      sql("SELECT state, COUNT(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY state", id),
    );
    const counts: Record<LineState, number> = { pending: 0, succeeded: 0, failed: 0, cancelled: 0, expired: 0 };
    for (const row of rows) counts[String(row["state"]) as LineState] = Number(row["n"]);
    return counts;
  }

  async pendingLines(id: string, limit: number): Promise<BatchLine[]> {
    const rows = await this.driver.all(
      sql("SELECT * FROM batch_lines WHERE batch_id = ? AND state = 'pending' ORDER BY idx LIMIT ?", id, limit),
    );
    return rows.map(lineOf);
  }

  async lines(id: string, from: number, to: number): Promise<BatchLine[]> {
    const rows = await this.driver.all(
      sql("SELECT * FROM batch_lines WHERE batch_id = ? AND idx >= ? AND idx < ? ORDER BY idx", id, from, to),
    );
    return rows.map(lineOf);
  }

  async finishLine(id: string, index: number, state: LineState, result: LineResult): Promise<boolean> {
    const [changed] = await this.driver.batch([
      sql(
        "UPDATE batch_lines SET state = ?, result = ? WHERE batch_id = ? AND idx = ? AND state = 'pending'",
        state,
        JSON.stringify(result),
        id,
        index,
      ),
    ]);
    return (changed ?? 0) > 0;
  }

  async touchBatch(
    id: string,
    now: number,
    when?: { readonly touchedAt: number } | { readonly before: number },
  ): Promise<boolean> {
    const statement =
      when === undefined
        ? sql("UPDATE batches SET touched_at = ? WHERE id = ?", now, id)
        : "touchedAt" in when
          ? sql("UPDATE batches SET touched_at = ? WHERE id = ? AND touched_at = ?", now, id, when.touchedAt)
          : sql("UPDATE batches SET touched_at = ? WHERE id = ? AND touched_at < ?", now, id, when.before);
    const [changed] = await this.driver.batch([statement]);
    return (changed ?? 0) > 0;
  }

  async noteAttempt(id: string, index: number): Promise<void> {
    await this.driver.batch([
      sql(
        "UPDATE batch_lines SET attempts = attempts + 1 WHERE batch_id = ? AND idx = ? AND state = 'pending'",
        id,
        index,
      ),
    ]);
  }

  async closePending(id: string, state: "cancelled" | "expired"): Promise<void> {
    await this.driver.batch([
      sql("UPDATE batch_lines SET state = ? WHERE batch_id = ? AND state = 'pending'", state, id),
    ]);
  }

  async moveBatch(
    id: string,
    from: readonly BatchStatus[],
    status: BatchStatus,
    at: number,
    files?: { output: string | null; error: string | null },
  ): Promise<boolean> {
    const marks = from.map(() => "?").join(", ");
    const setFiles = files === undefined ? "" : ", output_file_id = ?, error_file_id = ?";
    const fileParams = files === undefined ? [] : [files.output, files.error];
    const [changed] = await this.driver.batch([
      sql(
        `UPDATE batches SET status = ?, times = json_set(times, ?, ?)${setFiles} WHERE id = ? AND status IN (${marks})`,
        status,
        `$.${status}_at`,
        at,
        ...fileParams,
        id,
        ...from,
      ),
    ]);
    return (changed ?? 0) > 0;
  }
}
