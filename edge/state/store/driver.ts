// What every feature's store needs from a database: a driver runs statements (`store.ts` of
// edge/hosts/worker/ and edge/hosts/node/); the tables come from migrations/ (docs/decisions.md, "One
// store, two drivers"). Each feature writes its own SQL beside its handler (state/c1/sql.ts, …).

export type SqlValue = string | number | null;

export interface SqlStatement {
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

/** What the store needs from a database. */
export interface SqlDriver {
  /** The rows of one query. */
  all(statement: SqlStatement): Promise<Record<string, unknown>[]>;
  /** Runs the statements in one transaction (all or none); resolves with the rows each changed. */
  batch(statements: readonly SqlStatement[]): Promise<number[]>;
}

/** One statement with its parameters. */
export const sql = (text: string, ...params: SqlValue[]): SqlStatement => ({ sql: text, params });

/** A JSON column read back. */
export const parse = <T>(value: unknown): T => JSON.parse(String(value)) as T;
