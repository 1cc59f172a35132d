/**
 * A real, migrated SQLite database in a temp directory, with the repositories
 * on it. Shared by the persistence and ipynb integration tests.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Database, type DatabaseOptions } from "../../server/persistence/database";
import { MetricRepository } from "../../server/persistence/metric-repository";
import { NotebookRepository } from "../../server/persistence/notebook-repository";
import { RunRepository } from "../../server/persistence/run-repository";
import { LOCAL_USER, UserRepository } from "../../server/persistence/user-repository";

export interface TestDatabase {
  dir: string;
  file: string;
  db: Database;
  users: UserRepository;
  notebooks: NotebookRepository;
  runs: RunRepository;
  metrics: MetricRepository;
  ownerId: string;
  /** Closes the client and opens a new one on the same file (a server restart). */
  reopen(): Promise<TestDatabase>;
  /** Row counts of every table: "nothing was written" checks compare two of these. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function createTestDatabase(options: Omit<DatabaseOptions, "file" | "dataDir"> = {}): Promise<TestDatabase> {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-db-"));
  return openIn(dir, options, true);
}

async function openIn(dir: string, options: Omit<DatabaseOptions, "file" | "dataDir">, owner: boolean): Promise<TestDatabase> {
  const db = await openDatabase({ ...options, dataDir: dir });
  const users = new UserRepository(db.prisma);
  const user = await users.ensure(LOCAL_USER);
  const harness: TestDatabase = {
    dir,
    file: db.file,
    db,
    users,
    notebooks: new NotebookRepository(db.prisma),
    runs: new RunRepository(db.prisma),
    metrics: new MetricRepository(db.prisma),
    ownerId: user.id,
    reopen: async () => {
      await db.close();
      return openIn(dir, options, owner);
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
      if (owner) rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
