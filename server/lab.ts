/**
 * The lab's services, opened once: the database (migrated, runs cut off by a
 * previous stop marked interrupted), the notebook catalog, the hub of
 * open notebooks and the idle shutdown of their kernels. Shared by the
 * server entry point and the tests.
 */
import type { KernelHost } from "./kernel/kernel-host";
import { openDatabase, RunRepository, UserRepository, type Database } from "./persistence";
import { DatabaseCatalog } from "./notebook/database-catalog";
import { KernelCuller } from "./notebook/kernel-culler";
import { NotebookHub, type NotebookHubOptions } from "./notebook/notebook-hub";
import { ScenarioCatalog } from "./scenarios/scenario-catalog";

export interface LabOptions extends Omit<NotebookHubOptions, "catalog" | "host"> {
  /** Where lab.db lives (default MGPULAB_DATA_DIR or ./data). */
  dataDir?: string;
  host: () => KernelHost;
  log?: NotebookHubOptions["log"];
}

export interface Lab {
  db: Database;
  catalog: DatabaseCatalog;
  hub: NotebookHub;
  scenarios: ScenarioCatalog;
  /** Runs that a previous server process left "running", now marked interrupted. */
  interruptedRuns: number;
  close(): Promise<void>;
}

export async function openLab(options: LabOptions): Promise<Lab> {
  const db = await openDatabase({ dataDir: options.dataDir });
  await new UserRepository(db.prisma).ensure();
  const interrupted = await new RunRepository(db.prisma).interruptRunningRuns();
  const catalog = new DatabaseCatalog(db.prisma, (message) => options.log?.("error", message));
  const scenarios = new ScenarioCatalog();
  const hub = new NotebookHub({ ...options, catalog, templates: scenarios });
  const culler = new KernelCuller(hub.kernels, { log: options.log });
  culler.start();
  return {
    db,
    catalog,
    hub,
    scenarios,
    interruptedRuns: interrupted.length,
    close: async () => {
      culler.stop();
      await hub.shutdownAll();
      scenarios.close();
      await db.close();
    },
  };
}
