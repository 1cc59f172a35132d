/**
 * Backup and restore of the embedded database, <MGPULAB_DATA_DIR>/lab.db.
 *
 * Backup uses SQLite's online backup API while the lab serves: every page
 * is copied in one step, inside one read transaction, so the copy is the
 * database as of one moment (WAL mode: the lab's writes go on meanwhile and
 * are not in it). The copy is made one self-contained file (no -wal) and
 * checked (quick_check) before it takes its name.
 *
 * Restore refuses while any process has the database open (a running lab
 * server, a backup in progress); otherwise it checks the backup, moves the
 * current database aside (lab.db.before-restore-<time>, with its -wal and
 * -shm: nothing is lost) and puts the backup in its place. The lab applies
 * newer migrations when it next starts.
 */
import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { BackupError, sizeText, syncFile, writeNewFile } from "./backup-file";
import { processesWithOpen } from "./open-files";
import { errorMessage } from "../core/errors";

/** The copy is made in one step: all of the database's pages (SQLite's maximum per step). */
const ALL_PAGES = 0x7fffffff;
const BUSY_TIMEOUT_MS = 10_000;

export async function backupSqlite(database: string, file: string): Promise<string> {
  if (!existsSync(database)) throw new BackupError(`no lab database at ${database}: start the lab once, or set MGPULAB_DATA_DIR (or MGPULAB_DATABASE_URL)`);
  const began = performance.now();
  let facts = "";
  await writeNewFile(file, async (partial) => {
    const source = new BetterSqlite3(database, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    try {
      await source.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      source.close();
    }
    // The copy carries the lab's WAL mode; one file needs none (the lab turns WAL on again when it opens a restored file).
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    try {
      copy.pragma("journal_mode = DELETE");
    } finally {
      copy.close();
    }
    facts = checkLabDatabase(partial, "the copy");
  });
  return `backed up ${database} to ${file}: ${facts}, ${sizeText(statSync(file).size)}, in ${((performance.now() - began) / 1000).toFixed(1)} s`;
}

export function restoreSqlite(file: string, database: string): string {
  const facts = checkLabDatabase(file, file);
  const siblings = [database, `${database}-wal`, `${database}-shm`];
  const existing = siblings.filter((each) => existsSync(each)).map((each) => realpathSync(each));
  const users = existing.length > 0 ? processesWithOpen(existing) : [];
  if (users.length > 0) {
    throw new BackupError(
      `${database} is in use — a lab runs on it (stop it first; its kernels keep running for their lease): ${users.map((user) => `pid ${user.pid} (${user.command})`).join("; ")}`,
    );
  }
  mkdirSync(path.dirname(database), { recursive: true });
  const incoming = path.join(path.dirname(database), `.${path.basename(database)}.restoring-${process.pid}`);
  try {
    copyFileSync(file, incoming);
    syncFile(incoming);
    let keptAside = "";
    if (existsSync(database)) {
      const aside = `${database}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      for (const each of siblings) if (existsSync(each)) renameSync(each, each.replace(database, aside));
      keptAside = `; the database it replaced is kept as ${aside}`;
    }
    renameSync(incoming, database);
    return `restored ${file} (${facts}) into ${database}${keptAside}`;
  } finally {
    rmSync(incoming, { force: true });
  }
}

/** Says what the file holds ("3 notebooks, 5 runs"); throws unless it is a sound lab database. */
function checkLabDatabase(file: string, name: string): string {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupError(`${name} cannot be opened as a SQLite database: ${errorMessage(error)}`);
  }
  try {
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new BackupError(`${name} is damaged: quick_check says ${String(check)}`);
    const isLab = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'").get() !== undefined;
    if (!isLab) throw new BackupError(`${name} is a SQLite database but not a lab's (it has no _prisma_migrations table)`);
    const count = (table: string): number => (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    return `${count("Notebook")} notebooks, ${count("KernelRun")} runs, ${count("Workshop")} workshops`;
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${name} cannot be read as a lab database: ${errorMessage(error)}`);
  } finally {
    db.close();
  }
}
