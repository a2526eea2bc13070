// The store on each of its drivers, fresh for every call, for suites that run one contract against
// both: D1 (miniflare's, real SQLite behind workerd's D1 API, the migrations sent statement by
// statement as wrangler sends them) and SQLite on Node (better-sqlite3 in a temporary file).
import { Miniflare } from "miniflare";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS_DIR, openSqliteStore } from "../../edge/hosts/node/store.js";
import { d1Store, type D1DatabaseLike } from "../../edge/hosts/worker/store.js";
import type { Stores } from "../../edge/state/stores.js";

/** The migrations' statements, as wrangler sends them to D1. */
export function migrationStatements(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .flatMap((name) =>
      readFileSync(join(MIGRATIONS_DIR, name), "utf8")
        .split("\n")
        .filter((line) => !line.trim().startsWith("--"))
        .join("\n")
        .split(";")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
    );
}

export interface StoreDrivers {
  /** A fresh, empty store on each driver. */
  readonly open: Readonly<Record<"d1" | "sqlite", () => Promise<Stores>>>;
  /** Closes every store opened and removes their files. */
  close(): Promise<void>;
}

export function storeDrivers(): StoreDrivers {
  const dir = mkdtempSync(join(tmpdir(), "llm-edge-store-"));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  let fresh = 0;
  return {
    open: {
      async d1() {
        const mf = new Miniflare({
          modules: true,
          script: "export default { fetch() { return new Response(null) } }",
          d1Databases: [`DB${++fresh}`],
        });
        cleanups.push(() => mf.dispose());
        const db = (await mf.getD1Database(`DB${fresh}`)) as unknown as D1DatabaseLike;
        for (const statement of migrationStatements()) await db.prepare(statement).all();
        return d1Store(db);
      },
      sqlite() {
        const opened = openSqliteStore(join(dir, `store-${++fresh}.sqlite`));
        cleanups.push(() => opened.close());
        return Promise.resolve(opened.store);
      },
    },
    async close() {
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
