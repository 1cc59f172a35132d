/**
 * Which database the lab opens: MGPULAB_DATABASE_URL (or the `url` option)
 * names a PostgreSQL server; without it, the embedded SQLite file
 * <MGPULAB_DATA_DIR>/lab.db.
 *
 *   postgresql://user:password@host:5432/mgpulab?sslmode=require
 */
import path from "node:path";
import type { PoolConfig } from "pg";

export type DatabaseProvider = "sqlite" | "postgresql";

export const DEFAULT_DB_FILE_NAME = "lab.db";

/**
 * Connections per lab server. Prisma holds one for each interactive
 * transaction from BEGIN to COMMIT, and a lab's writers are few and short (a
 * batch of outputs or metrics per running notebook every moment, edits,
 * sign-ins): BENCHMARKS.md ("PostgreSQL transactions") measured throughput
 * flat from 10 connections up, so 10 leaves a default server (100
 * connections) room for several lab servers and an operator's psql.
 */
export const DEFAULT_POOL_SIZE = 10;
/** A statement running longer is cancelled: a runaway query must not hold locks for ever. */
export const STATEMENT_TIMEOUT_MS = 60_000;
/** A writer waits this long for another's row lock, as SQLite's busy timeout. */
export const LOCK_TIMEOUT_MS = 10_000;
/** A transaction left open by a client that stopped talking is ended, releasing its locks. */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** Opening a connection (or waiting for a free one in the pool) fails after this. */
export const CONNECT_TIMEOUT_MS = 10_000;

export type DatabaseTarget =
  | { provider: "sqlite"; file: string; description: string }
  /** `sslMode`: the URL's sslmode as libpq spells it, for the PostgreSQL programs the lab runs (pg_dump, psql: server/backup). */
  | { provider: "postgresql"; pool: PoolConfig; description: string; sslMode: string | null };

export interface TargetOptions {
  /** A postgres:// or postgresql:// URL; default $MGPULAB_DATABASE_URL; none: SQLite. */
  url?: string;
  /** Directory of the SQLite file; default $MGPULAB_DATA_DIR or ./data. */
  dataDir?: string;
  /** The SQLite file; default <dataDir>/lab.db. */
  file?: string;
  /** PostgreSQL pool size; default $MGPULAB_DATABASE_POOL or DEFAULT_POOL_SIZE. */
  poolSize?: number;
}

/** The settings read from the environment (process.env by default; tests pass their own). */
type Environment = Readonly<Record<string, string | undefined>>;

export function resolveDatabaseFile(options: Pick<TargetOptions, "dataDir" | "file"> = {}, env: Environment = process.env): string {
  if (options.file) return path.resolve(options.file);
  const dataDir = options.dataDir ?? (env.MGPULAB_DATA_DIR || path.resolve("data"));
  return path.resolve(dataDir, DEFAULT_DB_FILE_NAME);
}

export function resolveDatabaseTarget(options: TargetOptions = {}, env: Environment = process.env): DatabaseTarget {
  const url = options.url ?? (env.MGPULAB_DATABASE_URL || undefined);
  if (url === undefined) {
    const file = resolveDatabaseFile(options, env);
    return { provider: "sqlite", file, description: file };
  }
  const poolSize = options.poolSize ?? parsePoolSize(env.MGPULAB_DATABASE_POOL);
  return { provider: "postgresql", ...postgresPool(url, poolSize) };
}

function parsePoolSize(value: string | undefined): number {
  if (value === undefined || value === "") return DEFAULT_POOL_SIZE;
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1 || size > 1000) throw new Error(`MGPULAB_DATABASE_POOL must be a whole number from 1 to 1000, not ${JSON.stringify(value)}`);
  return size;
}

const SSL_MODES: Record<string, PoolConfig["ssl"]> = {
  disable: false,
  // Encrypted, the server's certificate unchecked (libpq's meaning of "require").
  require: { rejectUnauthorized: false },
  "verify-ca": { rejectUnauthorized: true },
  "verify-full": { rejectUnauthorized: true },
};
const QUERY_PARAMETERS = ["sslmode", "host", "application_name"];

/**
 * The pool for a PostgreSQL URL, as explicit fields rather than a
 * connectionString: the adapter's shadow database (migration diffs) is the
 * config with another `database`, which a connectionString would override.
 */
function postgresPool(url: string, poolSize: number): { pool: PoolConfig; description: string; sslMode: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("MGPULAB_DATABASE_URL is not a URL: expected postgresql://user:password@host:port/database");
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new Error(
      `MGPULAB_DATABASE_URL must be a postgres:// or postgresql:// URL, not ${parsed.protocol}//… (leave it unset for the SQLite file under MGPULAB_DATA_DIR)`,
    );
  }
  for (const key of parsed.searchParams.keys()) {
    if (!QUERY_PARAMETERS.includes(key)) throw new Error(`MGPULAB_DATABASE_URL: unsupported parameter ${JSON.stringify(key)} (supported: ${QUERY_PARAMETERS.join(", ")})`);
  }
  const sslmode = parsed.searchParams.get("sslmode");
  if (sslmode !== null && !(sslmode in SSL_MODES)) throw new Error(`MGPULAB_DATABASE_URL: sslmode must be one of ${Object.keys(SSL_MODES).join(", ")}`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) throw new Error("MGPULAB_DATABASE_URL must name a database: postgresql://user:password@host:port/database");
  const host = parsed.searchParams.get("host") ?? (parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost");
  const pool: PoolConfig = {
    host,
    port: parsed.port ? Number(parsed.port) : 5432,
    user: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    database,
    ssl: sslmode === null ? undefined : SSL_MODES[sslmode],
    application_name: parsed.searchParams.get("application_name") ?? "mgpulab",
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
  };
  const shown = new URL(parsed.toString());
  if (shown.password) shown.password = "***";
  return { pool, description: shown.toString(), sslMode: sslmode };
}
