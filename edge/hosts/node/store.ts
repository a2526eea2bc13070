// The store on Node: SQLite through better-sqlite3, in the file STORE_PATH names (`:memory:` keeps
// it in memory). The migrations wrangler applies to D1 (migrations/) are applied here at start-up,
// with the same bookkeeping table (`d1_migrations`), so one set of SQL serves both runtimes.
import Database from "better-sqlite3";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SqlDriver } from "../../state/store/driver.js";
import { sqlStores, type Stores } from "../../state/stores.js";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations/", import.meta.url));

/** Where `npm run edge` keeps conversations unless STORE_PATH says otherwise. */
export const DEFAULT_STORE_PATH = ".data/llm-edge.sqlite";

/** Applies the migrations not applied yet, in file-name order, each in its own transaction. */
export function migrate(db: Database.Database, dir = MIGRATIONS_DIR): string[] {
  db.exec(
    "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at " +
      "TIMESTAMP " +
      "DEFAULT CURRENT_TIMESTAMP NOT NULL)",
  );
  const applied = new Set(
    db
      .prepare("SELECT name FROM d1_migrations")
      .all()
      .map((row) => String((row as { name: unknown }).name)),
  );
  const pending = readdirSync(dir)
    .filter((name) => name.endsWith(".sql") && !applied.has(name))
    .sort();
  for (const name of pending) {
    const sql = readFileSync(join(dir, name), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").run(name);
    })();
  }
  return pending;
}

function sqliteDriver(db: Database.Database): SqlDriver {
  return {
    all(statement) {
      return Promise.resolve(db.prepare(statement.sql).all(...statement.params) as Record<string, unknown>[]);
    },
    batch(statements) {
      const run = db.transaction(() => statements.map((s) => db.prepare(s.sql).run(...s.params).changes));
      try {
        return Promise.resolve(run());
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
  };
}

export interface SqliteStore {
  readonly store: Stores;
  close(): void;
}

/** Opens (creating if needed) the database at `path` and brings its tables up to date. */
export function openSqliteStore(path: string): SqliteStore {
  if (path !== ":memory:" && path !== "") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // WAL: a crash mid-write leaves the last committed turn; readers never wait for a writer.
  if (path !== ":memory:" && path !== "") db.pragma("journal_mode = WAL");
  migrate(db);
  return { store: sqlStores(sqliteDriver(db)), close: () => db.close() };
}
