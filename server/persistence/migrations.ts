/**
 * Migrations without the Prisma CLI: apply `prisma/migrations/*` and diff the
 * schema against them with the WebAssembly schema engine. Same directory
 * layout and `_prisma_migrations` bookkeeping as `prisma migrate deploy`.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { NO_FILTER, startSchemaEngine, type MigrationList, type SchemaEngine } from "./schema-engine";

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
        (error: unknown) => ({ tag: "error" as const, value: error instanceof Error ? error.message : String(error) }),
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

/** Runs `body` with an engine connected to the SQLite file `dbFile`, and frees it afterwards. */
async function withEngine<T>(dbFile: string, paths: MigrationPaths, body: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const schema = await readSchema(paths.schemaPath);
  const adapter = new PrismaBetterSqlite3({ url: dbFile, timeout: 10_000 });
  const handle = await startSchemaEngine(schema, adapter);
  try {
    return await body(handle.engine);
  } catch (error) {
    throw new MigrationError(`schema engine: ${handle.describe(error)}`, { cause: error });
  } finally {
    await handle.free();
  }
}

/** Applies every migration not yet recorded in `_prisma_migrations`; returns their names. */
export async function applyMigrations(dbFile: string, paths: MigrationPaths = {}): Promise<string[]> {
  const migrationsList = await readMigrationList(paths.migrationsDir);
  if (migrationsList.migrationDirectories.length === 0) {
    throw new MigrationError(`no migrations in ${migrationsList.baseDir}`);
  }
  return withEngine(dbFile, paths, async (engine) => {
    const result = await engine.applyMigrations({ migrationsList, filters: NO_FILTER });
    return result.appliedMigrationNames;
  });
}

export type DiffSource =
  /** Replays prisma/migrations on a shadow database in memory: "what is the next migration?" */
  | "migrations"
  /** Introspects the database `dbFile` itself: "does this database match schema.prisma?" */
  | "database"
  /** Nothing: the whole schema as one script. */
  | "empty";

/**
 * The SQL script that takes `from` to schema.prisma; "" when they match.
 * For "migrations" and "empty", `dbFile` is only the engine's connection and
 * is not changed (":memory:" is fine).
 */
export async function diffToSchema(from: DiffSource, dbFile = ":memory:", paths: MigrationPaths = {}): Promise<string> {
  const schema = await readSchema(paths.schemaPath);
  const source =
    from === "migrations"
      ? { tag: "migrations" as const, ...(await readMigrationList(paths.migrationsDir)) }
      : from === "database"
        ? { tag: "schemaDatasource" as const, files: [schema], configDir: path.dirname(schema.path) }
        : { tag: "empty" as const };
  return withEngine(dbFile, paths, async (engine) => {
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
