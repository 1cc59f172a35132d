/**
 * Migrations without the Prisma CLI: apply `prisma/migrations/*` (SQLite) or
 * `prisma/postgres/migrations/*` (PostgreSQL) and diff the schema against
 * them with the WebAssembly schema engine. Same directory layout and
 * `_prisma_migrations` bookkeeping as `prisma migrate deploy`.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { DatabaseProvider, DatabaseTarget } from "./database-target";
import { postgresEngineAdapter } from "./postgres-engine-adapter";
import { NO_FILTER, startSchemaEngine, type MigrationList, type SchemaEngine } from "./schema-engine";
import { errorMessage } from "../core/errors";

/**
 * The repository's prisma directory (schema.prisma and migrations/):
 * $MGPULAB_PRISMA_DIR, else next to this source tree, else under the working
 * directory (when a bundler has moved this file).
 */
export const PRISMA_DIR = findPrismaDir();

function findPrismaDir(): string {
  const candidates = [process.env.MGPULAB_PRISMA_DIR, path.resolve(__dirname, "../../prisma"), path.resolve(process.cwd(), "prisma")];
  for (const candidate of candidates) {
    if (candidate && existsSync(path.join(candidate, "schema.prisma"))) return candidate;
  }
  return candidates[1]!;
}
export const SCHEMA_PATH = path.join(PRISMA_DIR, "schema.prisma");
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, "migrations");
export const LOCKFILE_NAME = "migration_lock.toml";
/** PostgreSQL's schema (derived from schema.prisma: postgres-schema.ts) and its own migrations. */
export const POSTGRES_SCHEMA_PATH = path.join(PRISMA_DIR, "postgres", "schema.prisma");
export const POSTGRES_MIGRATIONS_DIR = path.join(PRISMA_DIR, "postgres", "migrations");

/** The schema file and migrations directory of a provider. */
export function defaultPaths(provider: DatabaseProvider): Required<MigrationPaths> {
  return provider === "sqlite"
    ? { schemaPath: SCHEMA_PATH, migrationsDir: MIGRATIONS_DIR }
    : { schemaPath: POSTGRES_SCHEMA_PATH, migrationsDir: POSTGRES_MIGRATIONS_DIR };
}

export class MigrationError extends Error {
  override readonly name: string = "MigrationError";
}

/** Reads the migrations directory as `prisma migrate` does (directories sorted by name, each with migration.sql). */
export async function readMigrationList(migrationsDir = MIGRATIONS_DIR): Promise<MigrationList> {
  const lockfile = await readFile(path.join(migrationsDir, LOCKFILE_NAME), "utf8").catch(orNullIfMissing);
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch((error: unknown) => {
    if (isMissing(error)) return [];
    throw error;
  });
  const directories = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const migrationDirectories = await Promise.all(
    directories.map(async (name) => {
      const content = await readFile(path.join(migrationsDir, name, "migration.sql"), "utf8").then(
        (value) => ({ tag: "ok" as const, value }),
        (error: unknown) => ({ tag: "error" as const, value: errorMessage(error) }),
      );
      return { path: name, migrationFile: { path: "migration.sql", content } };
    }),
  );
  return { baseDir: migrationsDir, lockfile: { path: LOCKFILE_NAME, content: lockfile }, shadowDbInitScript: "", migrationDirectories };
}

export async function readSchema(schemaPath = SCHEMA_PATH): Promise<{ path: string; content: string }> {
  return { path: schemaPath, content: await readFile(schemaPath, "utf8") };
}

export interface MigrationPaths {
  schemaPath?: string;
  migrationsDir?: string;
}

/** Where the engine works: a SQLite file (a path; ":memory:" for none) or a database target. */
export type EngineTarget = string | DatabaseTarget;

function targetOf(target: EngineTarget): DatabaseTarget {
  return typeof target === "string" ? { provider: "sqlite", file: target, description: target } : target;
}

function pathsFor(target: DatabaseTarget, paths: MigrationPaths): Required<MigrationPaths> {
  const defaults = defaultPaths(target.provider);
  return { schemaPath: paths.schemaPath ?? defaults.schemaPath, migrationsDir: paths.migrationsDir ?? defaults.migrationsDir };
}

/** The engine's connections (PostgreSQL's: two are plenty, and a shadow database beside them). */
function adapterFactory(target: DatabaseTarget): SqlMigrationAwareDriverAdapterFactory {
  return target.provider === "sqlite" ? new PrismaBetterSqlite3({ url: target.file, timeout: 10_000 }) : postgresEngineAdapter({ ...target.pool, max: 2 });
}

/** Runs `body` with an engine connected to `target`, and frees it afterwards. */
async function withEngine<T>(target: DatabaseTarget, schemaPath: string, body: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const schema = await readSchema(schemaPath);
  const handle = await startSchemaEngine(schema, adapterFactory(target));
  try {
    return await body(handle.engine);
  } catch (error) {
    throw new MigrationError(`schema engine: ${handle.describe(error)}`, { cause: error });
  } finally {
    await handle.free();
  }
}

/** Applies every migration not yet recorded in `_prisma_migrations`; returns their names. */
export async function applyMigrations(target: EngineTarget, paths: MigrationPaths = {}): Promise<string[]> {
  const resolved = targetOf(target);
  const { schemaPath, migrationsDir } = pathsFor(resolved, paths);
  const migrationsList = await readMigrationList(migrationsDir);
  if (migrationsList.migrationDirectories.length === 0) {
    throw new MigrationError(`no migrations in ${migrationsList.baseDir}`);
  }
  return withEngine(resolved, schemaPath, async (engine) => {
    const result = await engine.applyMigrations({ migrationsList, filters: NO_FILTER });
    return result.appliedMigrationNames;
  });
}

export type DiffSource =
  /** Replays the migrations on a shadow database: "what is the next migration?" */
  | "migrations"
  /** Introspects the target database itself: "does this database match the schema?" */
  | "database"
  /** Nothing: the whole schema as one script. */
  | "empty";

/**
 * The SQL script that takes `from` to the provider's schema; "" when they
 * match. For "migrations" and "empty", `target` is only the engine's
 * connection and is not changed (":memory:" is fine for SQLite; PostgreSQL's
 * shadow database is a throwaway database the adapter creates beside it).
 */
export async function diffToSchema(from: DiffSource, target: EngineTarget = ":memory:", paths: MigrationPaths = {}): Promise<string> {
  const resolved = targetOf(target);
  const { schemaPath, migrationsDir } = pathsFor(resolved, paths);
  const schema = await readSchema(schemaPath);
  const source =
    from === "migrations"
      ? { tag: "migrations" as const, ...(await readMigrationList(migrationsDir)) }
      : from === "database"
        ? { tag: "schemaDatasource" as const, files: [schema], configDir: path.dirname(schema.path) }
        : { tag: "empty" as const };
  return withEngine(resolved, schemaPath, async (engine) => {
    const result = await engine.diff({
      from: source,
      to: { tag: "schemaDatamodel", files: [schema] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    return normaliseScript(result.stdout ?? "");
  });
}

/** The engine prints "-- This is an empty migration." for no drift. */
function normaliseScript(script: string): string {
  const meaningful = script
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("--"))
    .join("\n");
  return meaningful === "" ? "" : script.trimEnd() + "\n";
}

function isMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

function orNullIfMissing(error: unknown): null {
  if (isMissing(error)) return null;
  throw error;
}
