/**
 * The lab's database, migrated on open with the WebAssembly schema engine,
 * and one shared PrismaClient per process (cached on globalThis so dev
 * reloads and route handlers reuse it). Where it lives (database-target.ts):
 * a SQLite file under the data directory by default, or the PostgreSQL
 * server MGPULAB_DATABASE_URL names.
 *
 *   const db = await getDatabase();          // the shared one
 *   const notebooks = new NotebookRepository(db.prisma);
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlDriverAdapterFactory, Transaction } from "@prisma/driver-adapter-utils";
import pg, { type PoolConfig } from "pg";
import { PrismaClient } from "./generated/client";
import { PrismaClient as PostgresPrismaClient } from "./generated-pg/client";
import { applyMigrations, diffToSchema, readMigrationList, type MigrationPaths } from "./migrations";
import { resolveDatabaseTarget, type DatabaseProvider, type DatabaseTarget, type TargetOptions } from "./database-target";
import { timedAdapterFactory, type StatementObserver } from "./timed-adapter";
import { openPostgresSql, openSqliteSql, SerialLock, type Sql } from "./sql";

export type { PrismaClient } from "./generated/client";
export { MigrationError } from "./migrations";
export { DEFAULT_DB_FILE_NAME, resolveDatabaseFile, type DatabaseProvider } from "./database-target";

/** How long a writer waits for another connection's lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 10_000;

export interface DatabaseOptions extends MigrationPaths, TargetOptions {
  /** Told about applied migrations. */
  onMigrated?: (names: string[]) => void;
  /** Open a database a running lab has migrated, without the schema engine (which would wait on that lab's locks). */
  alreadyMigrated?: boolean;
  /** Told how long each statement took (the operator's metrics). */
  onStatement?: StatementObserver;
}

export interface Database {
  readonly prisma: PrismaClient;
  /** The lab's own prepared statements on the same database (sql.ts): the cell-run hot path. */
  readonly sql: Sql;
  readonly provider: DatabaseProvider;
  /** The SQLite file; for PostgreSQL, the URL without its password (for logs). */
  readonly file: string;
  readonly target: DatabaseTarget;
  /** Migrations applied by this open (empty when the database was up to date). */
  readonly appliedMigrations: string[];
  close(): Promise<void>;
}

/** Which provider each open client talks to: Better Auth's adapter must be told (lab-auth.ts). */
const providers = new WeakMap<PrismaClient, DatabaseProvider>();
/** The prepared-statement connection opened beside each client: repositories take the client and find it here. */
const sqlConnections = new WeakMap<PrismaClient, Sql>();

export function databaseProviderOf(prisma: PrismaClient): DatabaseProvider {
  const provider = providers.get(prisma);
  if (!provider) throw new Error("this PrismaClient was not opened by openDatabase(): its provider is unknown");
  return provider;
}

export function sqlOf(prisma: PrismaClient): Sql {
  const sql = sqlConnections.get(prisma);
  if (!sql) throw new Error("this PrismaClient was not opened by openDatabase(): it has no SQL connection beside it");
  return sql;
}

/**
 * Opens (creating if needed) the database, applies pending migrations and
 * returns a client on it. Each call opens a new client: use `getDatabase()`
 * in the server, this in tests and tools.
 */
export async function openDatabase(options: DatabaseOptions = {}): Promise<Database> {
  const target = resolveDatabaseTarget(options);
  // Another lab server on the same SQLite file holds connections the schema engine would wait on: it is skipped when nothing is pending.
  const upToDate = target.provider === "sqlite" ? await prepareSqliteFile(target.file, options) : false;
  const appliedMigrations = options.alreadyMigrated || upToDate ? [] : await applyMigrations(target, options);
  if (appliedMigrations.length > 0) options.onMigrated?.(appliedMigrations);
  const { prisma, sql, close } = target.provider === "sqlite" ? openSqlite(target.file, options.onStatement) : openPostgres(target.pool, options.onStatement);
  await prisma.$connect();
  providers.set(prisma, target.provider);
  sqlConnections.set(prisma, sql);
  return {
    prisma,
    sql,
    provider: target.provider,
    file: target.description,
    target,
    appliedMigrations,
    close,
  };
}

/**
 * Creates the file's directory and puts the file in WAL mode, a property of
 * the file: readers never block the one writer. Says whether every migration
 * is already applied.
 */
async function prepareSqliteFile(file: string, paths: MigrationPaths): Promise<boolean> {
  mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file, { timeout: BUSY_TIMEOUT_MS });
  let upToDate: boolean;
  try {
    raw.pragma("journal_mode = WAL");
    upToDate = await migrationsRecorded(raw, paths);
  } finally {
    raw.close();
  }
  return upToDate;
}

interface Opened {
  prisma: PrismaClient;
  sql: Sql;
  close(): Promise<void>;
}

/** Prisma's connection and the lab's own, taking turns through one lock (sql.ts). */
function openSqlite(file: string, onStatement?: StatementObserver): Opened {
  const lock = new SerialLock();
  const driver = new PrismaBetterSqlite3({ url: file, timeout: BUSY_TIMEOUT_MS });
  const prisma = new PrismaClient({ adapter: withConnectionPragmas(onStatement ? timedAdapterFactory(driver, "sqlite", onStatement) : driver, lock) });
  const sql = openSqliteSql(file, lock, BUSY_TIMEOUT_MS, onStatement);
  return {
    prisma,
    sql,
    close: async () => {
      await prisma.$disconnect();
      await sql.close();
    },
  };
}

/**
 * PostgreSQL's client is generated from the same models (prisma/postgres/
 * schema.prisma is derived from schema.prisma, only the provider differs),
 * so its API is the SQLite client's: the repositories are typed against one
 * and take either. The cast is where that is asserted, not proven — the
 * persistence suite runs every repository on both databases for that.
 * One pool serves Prisma and the lab's own statements.
 */
function openPostgres(config: PoolConfig, onStatement?: StatementObserver): Opened {
  const pool = new pg.Pool(config);
  // An idle connection the server ends (a restart, an administrator, a failover) is an 'error' on the pool,
  // and with no listener an uncaught exception. Prisma's adapter listens only while connected: $disconnect
  // removes its listener before close() ends the pool, so a database going away in that window crashed the
  // closing process (driver-leases.test.ts failed 3 runs in 6 that way as its PostgreSQL stopped; 0 in 6
  // with this). The pool drops such a connection itself, and a query that fails says so to its caller.
  pool.on("error", () => undefined);
  const driver = new PrismaPg(pool);
  const prisma = new PostgresPrismaClient({ adapter: onStatement ? timedAdapterFactory(driver, "postgresql", onStatement) : driver }) as unknown as PrismaClient;
  return {
    prisma,
    sql: openPostgresSql(pool, onStatement),
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** Whether every migration in the directory is recorded as finished in the file (nothing for the schema engine to do). */
async function migrationsRecorded(raw: BetterSqlite3.Database, paths: MigrationPaths): Promise<boolean> {
  const hasTable = raw.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'").get() !== undefined;
  if (!hasTable) return false;
  const finished = new Set(
    (raw.prepare("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL").all() as Array<{ migration_name: string }>).map((row) => row.migration_name),
  );
  const wanted = (await readMigrationList(paths.migrationsDir)).migrationDirectories.map((migration) => migration.path);
  return wanted.length > 0 && wanted.every((name) => finished.has(name));
}

/**
 * Every connection the adapter opens gets the per-connection settings —
 * foreign keys on (SQLite's default is off, and cascades depend on it), and
 * `synchronous = NORMAL`, durable across application crashes in WAL mode —
 * and is serialised (see serialised()).
 */
function withConnectionPragmas(factory: SqlDriverAdapterFactory, lock: SerialLock): SqlDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async (): Promise<SqlDriverAdapter> => {
      const adapter = await factory.connect();
      await adapter.executeScript("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;");
      return serialised(adapter, lock);
    },
  };
}

/**
 * SQLite only: PostgreSQL isolates each pooled connection's transaction itself.
 * The better-sqlite3 adapter has one connection and only orders transactions
 * among themselves: a statement issued outside a transaction while an
 * interactive transaction is open runs inside it — it reads uncommitted rows
 * and its writes vanish if that transaction rolls back. Here every statement
 * outside a transaction waits until no transaction is open, and a
 * transaction holds the connection from BEGIN to COMMIT/ROLLBACK. The lock
 * is shared with the lab's own connection to the file (sql.ts).
 */
function serialised(adapter: SqlDriverAdapter, lock: SerialLock): SqlDriverAdapter {
  const acquire = () => lock.acquire();
  const exclusive = <T>(body: () => Promise<T>): Promise<T> => lock.run(body);
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) => exclusive(() => adapter.queryRaw(query)),
    executeRaw: (query) => exclusive(() => adapter.executeRaw(query)),
    executeScript: (script) => exclusive(() => adapter.executeScript(script)),
    getConnectionInfo: adapter.getConnectionInfo?.bind(adapter),
    dispose: () => exclusive(() => adapter.dispose()),
    startTransaction: async (isolationLevel) => {
      const release = await acquire();
      let transaction: Transaction;
      try {
        transaction = await adapter.startTransaction(isolationLevel);
      } catch (error) {
        release();
        throw error;
      }
      const end = (finish: () => Promise<void>) => async () => {
        try {
          await finish();
        } finally {
          release();
        }
      };
      const wrapped: Transaction = {
        provider: transaction.provider,
        adapterName: transaction.adapterName,
        options: transaction.options,
        queryRaw: (query) => transaction.queryRaw(query),
        executeRaw: (query) => transaction.executeRaw(query),
        commit: end(() => transaction.commit()),
        rollback: end(() => transaction.rollback()),
      };
      if (transaction.createSavepoint) wrapped.createSavepoint = (name) => transaction.createSavepoint!(name);
      if (transaction.rollbackToSavepoint) wrapped.rollbackToSavepoint = (name) => transaction.rollbackToSavepoint!(name);
      if (transaction.releaseSavepoint) wrapped.releaseSavepoint = (name) => transaction.releaseSavepoint!(name);
      return wrapped;
    },
  };
}

/**
 * The SQL that would make the database match schema.prisma; "" when it
 * does. Non-empty means the database was changed outside the migrations, or
 * schema.prisma was changed without a migration
 * (`npx tsx scripts/db-migrate-diff.ts --write <name>`). A string is a SQLite file.
 */
export function checkDrift(target: Database | string, paths: MigrationPaths = {}): Promise<string> {
  return diffToSchema("database", typeof target === "string" ? target : target.target, paths);
}

const globalForDatabase = globalThis as typeof globalThis & { __mgpulabDatabase?: Promise<Database> };

/** The process's shared database, opened (and migrated) on first use. */
export function getDatabase(options: DatabaseOptions = {}): Promise<Database> {
  globalForDatabase.__mgpulabDatabase ??= openDatabase(options).catch((error: unknown) => {
    globalForDatabase.__mgpulabDatabase = undefined;
    throw error;
  });
  return globalForDatabase.__mgpulabDatabase;
}

/** Closes the shared database (server shutdown, tests). */
export async function closeDatabase(): Promise<void> {
  const pending = globalForDatabase.__mgpulabDatabase;
  globalForDatabase.__mgpulabDatabase = undefined;
  if (pending) await (await pending).close();
}
