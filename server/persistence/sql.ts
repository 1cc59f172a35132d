/**
 * The lab's own SQL, for the few statements every cell run makes (its
 * execution, outputs, metrics and read position): each statement is
 * prepared once per connection and reused, with no query compiler in
 * between. Prisma's client stays for everything else. Repositories use
 * this; nothing outside server/persistence sees SQL.
 *
 * - SQLite: a second connection to the same file (WAL mode), serialised
 *   with Prisma's through one lock (SerialLock, database.ts): a statement
 *   here never runs while a Prisma transaction is open, nor one of Prisma's
 *   inside a transaction here. Transactions take the write lock at BEGIN
 *   (IMMEDIATE), so another process on the file makes them wait, not fail.
 * - PostgreSQL: Prisma's own pool; each statement is a named prepared
 *   statement, parsed once per pooled connection.
 *
 * Statements are written with `?` placeholders (numbered for PostgreSQL
 * here) and values in the stored formats of Prisma's schema: `time()` turns
 * a Date into the text each provider stores, JSON is bound as its text.
 * A statement's text must come from a bounded set (multi-row inserts come
 * in power-of-two sizes, see `rowChunks`): each distinct text is kept
 * prepared for as long as its connection lives.
 */
import { createHash } from "node:crypto";
import BetterSqlite3 from "better-sqlite3";
import type { Pool, PoolClient } from "pg";
import type { DatabaseProvider } from "./database-target";
import type { StatementObserver } from "./timed-adapter";

export type SqlValue = string | number | boolean | null;
export type SqlRow = Readonly<Record<string, unknown>>;

export interface SqlQueries {
  /** A moment as the provider stores a DateTime column (Prisma's format, so its queries compare and read it alike). */
  time(date: Date): string;
  /** The rows a statement returns (a SELECT, or a write with RETURNING). */
  all(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Runs a write; how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export interface Sql extends SqlQueries {
  readonly provider: DatabaseProvider;
  /** Runs `body` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (tx: SqlQueries) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One at a time, in arrival order: SQLite's one writer, shared by Prisma's connection and this one. */
export class SerialLock {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  /** Resolves once the lock is this caller's; call the returned function to pass it on. */
  async acquire(): Promise<() => void> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    };
  }

  async run<T>(body: () => Promise<T> | T): Promise<T> {
    const release = await this.acquire();
    try {
      return await body();
    } finally {
      release();
    }
  }
}

/** Row counts a multi-row statement comes in: `count` rows as power-of-two chunks (at most `max`), so few distinct texts exist. */
export function rowChunks(count: number, max = 256): number[] {
  const chunks: number[] = [];
  let left = count;
  while (left > 0) {
    let size = max;
    while (size > left) size /= 2;
    chunks.push(size);
    left -= size;
  }
  return chunks;
}

/** `(?, ?, …)` repeated `rows` times, for a multi-row VALUES. */
export function valuesList(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
  return Array.from({ length: rows }, () => row).join(", ");
}

/** Tells the observer (the operator's metrics) how long a statement took since `began` (performance.now()). */
const reporter = (observe: StatementObserver | undefined, provider: DatabaseProvider) =>
  observe ? (operation: "query" | "execute", began: number) => observe({ provider, operation, seconds: (performance.now() - began) / 1000 }) : () => undefined;

// --- SQLite ---------------------------------------------------------------------------------------

export function openSqliteSql(file: string, lock: SerialLock, busyTimeoutMs: number, observe?: StatementObserver): Sql {
  const db = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  const statements = new Map<string, BetterSqlite3.Statement>();
  const report = reporter(observe, "sqlite");
  const prepared = (sql: string): BetterSqlite3.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  // better-sqlite3 binds no booleans: SQLite stores them as 0 and 1, as Prisma does.
  const bind = (params: readonly SqlValue[]) => params.map((value) => (typeof value === "boolean" ? (value ? 1 : 0) : value));
  const time = (date: Date) => date.toISOString().replace("Z", "+00:00");
  const direct: SqlQueries = {
    time,
    all: (sql, params = []) => {
      const statement = prepared(sql);
      const began = performance.now();
      try {
        if (!statement.reader) {
          statement.run(...bind(params));
          return Promise.resolve([]);
        }
        return Promise.resolve(statement.all(...bind(params)).filter(isRow));
      } finally {
        report("query", began);
      }
    },
    run: (sql, params = []) => {
      const statement = prepared(sql);
      const began = performance.now();
      try {
        return Promise.resolve(statement.run(...bind(params)).changes);
      } finally {
        report("execute", began);
      }
    },
  };
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  return {
    provider: "sqlite",
    time,
    all: (sql, params) => lock.run(() => direct.all(sql, params)),
    run: (sql, params) => lock.run(() => direct.run(sql, params)),
    transaction: (body) =>
      lock.run(async () => {
        begin.run();
        try {
          const result = await body(direct);
          commit.run();
          return result;
        } catch (error) {
          if (db.inTransaction) rollback.run();
          throw error;
        }
      }),
    close: async () => {
      await lock.run(() => db.close());
    },
  };
}

// --- PostgreSQL -----------------------------------------------------------------------------------

/** Rows of a query result (pg's rows are objects keyed by column). */
function rowsOf(result: { rows: unknown[] }): SqlRow[] {
  return result.rows.filter(isRow);
}

export function openPostgresSql(pool: Pool, observe?: StatementObserver): Sql {
  const texts = new Map<string, { name: string; text: string }>();
  const report = reporter(observe, "postgresql");
  const statement = (sql: string): { name: string; text: string } => {
    let known = texts.get(sql);
    if (!known) {
      let n = 0;
      known = { name: `mgpulab_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`, text: sql.replace(/\?/g, () => `$${++n}`) };
      texts.set(sql, known);
    }
    return known;
  };
  // timestamp(3) without a time zone holds UTC (Prisma's convention): the UTC wall time, no offset.
  const time = (date: Date) => date.toISOString().replace("T", " ").replace("Z", "");
  const queries = (client: Pool | PoolClient): SqlQueries => ({
    time,
    all: async (sql, params = []) => {
      const { name, text } = statement(sql);
      const began = performance.now();
      try {
        return rowsOf(await client.query({ name, text, values: [...params] }));
      } finally {
        report("query", began);
      }
    },
    run: async (sql, params = []) => {
      const { name, text } = statement(sql);
      const began = performance.now();
      try {
        return (await client.query({ name, text, values: [...params] })).rowCount ?? 0;
      } finally {
        report("execute", began);
      }
    },
  });
  return {
    provider: "postgresql",
    ...queries(pool),
    transaction: async (body) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await body(queries(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    // The pool is Prisma's too: database.ts ends it after Prisma disconnects.
    close: async () => undefined,
  };
}

function isRow(value: unknown): value is SqlRow {
  return typeof value === "object" && value !== null;
}
