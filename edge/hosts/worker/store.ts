// The Worker's stores: the SQL driver for Cloudflare D1 (the `DB` binding in wrangler.toml). A D1 batch runs as
// one transaction: a turn is stored whole or not at all.
import type { SqlDriver, SqlStatement } from "../../state/store/driver.js";
import { sqlStores, type Stores } from "../../state/stores.js";

/** The part of D1's prepared statement the store uses. */
export interface D1PreparedStatementLike {
  bind(...values: unknown[]): D1PreparedStatementLike;
  all(): Promise<{ results: unknown[] }>;
}

/** The part of a D1 binding (`env.DB`) the store uses. */
export interface D1DatabaseLike {
  prepare(query: string): D1PreparedStatementLike;
  batch(statements: D1PreparedStatementLike[]): Promise<{ meta: { changes?: number } }[]>;
}

export function d1Driver(db: D1DatabaseLike): SqlDriver {
  const prepared = (statement: SqlStatement) => db.prepare(statement.sql).bind(...statement.params);
  return {
    async all(statement) {
      const { results } = await prepared(statement).all();
      return results as Record<string, unknown>[];
    },
    async batch(statements) {
      const results = await db.batch(statements.map(prepared));
      return results.map((result) => result.meta.changes ?? 0);
    },
  };
}

/** The stores on a D1 binding. */
export function d1Store(db: D1DatabaseLike): Stores {
  return sqlStores(d1Driver(db));
}
