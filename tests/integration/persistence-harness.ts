/**
 * A real, migrated database with the repositories on it: a SQLite file in a
 * temp directory, or a fresh database on a throwaway PostgreSQL
 * (tests/helpers/postgres.ts). Shared by the persistence and ipynb
 * integration tests; `forEachDatabase` runs a file's cases on both.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe } from "node:test";
import { openDatabase, type Database, type DatabaseOptions, type DatabaseProvider } from "../../server/persistence/database";
import { MetricRepository } from "../../server/persistence/metric-repository";
import { NotebookRepository } from "../../server/persistence/notebook-repository";
import { RunRepository } from "../../server/persistence/run-repository";
import { LOCAL_USER, UserRepository } from "../../server/persistence/user-repository";
import { postgresUnavailable, startPostgres, type TestPostgres } from "../helpers/postgres";

export interface TestDatabase {
  provider: DatabaseProvider;
  /** What openDatabase needs to open this same database again. */
  where: Pick<DatabaseOptions, "dataDir" | "url">;
  /** The SQLite file, or PostgreSQL's URL without password. */
  file: string;
  db: Database;
  users: UserRepository;
  notebooks: NotebookRepository;
  runs: RunRepository;
  metrics: MetricRepository;
  ownerId: string;
  /** Closes the client and opens a new one on the same database (a server restart). */
  reopen(): Promise<TestDatabase>;
  /** Row counts of every table: "nothing was written" checks compare two of these. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

type HarnessOptions = Omit<DatabaseOptions, "file" | "dataDir" | "url">;

/** One kind of database under test: fresh, empty, migrated databases of it on demand. */
export interface DatabaseKind {
  provider: DatabaseProvider;
  /** Where a fresh, empty database is (not yet migrated), and how to remove it. */
  fresh(): Promise<{ where: Pick<DatabaseOptions, "dataDir" | "url">; remove(): Promise<void> }>;
  /** A fresh database, migrated, with the repositories on it. */
  create(options?: HarnessOptions): Promise<TestDatabase>;
}

export const sqlite: DatabaseKind = {
  provider: "sqlite",
  fresh: async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-db-"));
    return { where: { dataDir: dir }, remove: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  create: (options) => createIn(sqlite, options),
};

/** PostgreSQL on one throwaway server per test file, started on first use; stop() ends it. */
export function postgres(): DatabaseKind & { stop(): Promise<void> } {
  let server: Promise<TestPostgres> | null = null;
  const kind = {
    provider: "postgresql" as const,
    fresh: async () => {
      server ??= startPostgres();
      const url = await (await server).createDatabase();
      // Its database goes with the server (or, on a shared server, when the server helper stops).
      return { where: { url }, remove: async () => {} };
    },
    create: (options?: HarnessOptions) => createIn(kind, options),
    stop: async () => {
      const running = server;
      server = null;
      if (running) await (await running).stop();
    },
  };
  return kind;
}

/** The SQLite database of the tests that are about SQLite only (ipynb). */
export function createTestDatabase(options: HarnessOptions = {}): Promise<TestDatabase> {
  return sqlite.create(options);
}

/**
 * Declares `body`'s tests twice: under "on SQLite" and "on PostgreSQL". The
 * PostgreSQL half is skipped, saying what to install, where no PostgreSQL
 * can be started.
 */
export function forEachDatabase(body: (kind: DatabaseKind) => void): void {
  describe("on SQLite", () => body(sqlite));
  const unavailable = postgresUnavailable();
  describe("on PostgreSQL", { skip: unavailable ?? false }, () => {
    const kind = postgres();
    after(() => kind.stop());
    body(kind);
  });
}

async function createIn(kind: DatabaseKind, options: HarnessOptions = {}): Promise<TestDatabase> {
  const place = await kind.fresh();
  return openIn(kind.provider, place.where, options, place.remove);
}

async function openIn(provider: DatabaseProvider, where: TestDatabase["where"], options: HarnessOptions, remove: () => Promise<void>): Promise<TestDatabase> {
  const db = await openDatabase({ ...options, ...where });
  const users = new UserRepository(db.prisma);
  const user = await users.ensure(LOCAL_USER);
  const harness: TestDatabase = {
    provider,
    where,
    file: db.file,
    db,
    users,
    notebooks: new NotebookRepository(db.prisma),
    runs: new RunRepository(db.prisma),
    metrics: new MetricRepository(db.prisma),
    ownerId: user.id,
    reopen: async () => {
      await db.close();
      return openIn(provider, where, options, remove);
    },
    counts: async () => {
      const p = db.prisma;
      const [users_, notebooks, cells, runs, executions, outputs, series, points] = await Promise.all([
        p.user.count(),
        p.notebook.count(),
        p.cell.count(),
        p.kernelRun.count(),
        p.cellExecution.count(),
        p.cellOutput.count(),
        p.metricSeries.count(),
        p.metricPoint.count(),
      ]);
      return { users: users_, notebooks, cells, runs, executions, outputs, series, points };
    },
    close: async () => {
      await db.close();
      await remove();
    },
  };
  return harness;
}
