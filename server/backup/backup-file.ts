/**
 * The backup file itself: what kind it is (read from its first bytes, never
 * from its name), and writing one so that a half-written file never stands
 * under the name asked for (a temp file beside it, renamed once complete),
 * readable by its owner only (it holds password hashes and sessions).
 */
import { closeSync, existsSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";

/** A refusal or failure the operator can act on: said in one line, nothing changed. */
export class BackupError extends Error {}

export type BackupKind = "sqlite" | "postgresql";

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");
/** pg_dump's custom format (--format=custom). */
const PG_DUMP_HEADER = Buffer.from("PGDMP", "latin1");

export function backupKindOf(file: string): BackupKind {
  if (!existsSync(file)) throw new BackupError(`${file}: no such file`);
  if (!statSync(file).isFile()) throw new BackupError(`${file}: not a file`);
  const head = Buffer.alloc(16);
  const fd = openSync(file, "r");
  let read: number;
  try {
    read = readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read >= SQLITE_HEADER.length && head.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER)) return "sqlite";
  if (read >= PG_DUMP_HEADER.length && head.subarray(0, PG_DUMP_HEADER.length).equals(PG_DUMP_HEADER)) return "postgresql";
  throw new BackupError(`${file} is not a lab backup: neither a SQLite database nor a pg_dump archive (made by npm run lab -- backup)`);
}

/**
 * Writes `file` through `write(partial)`: the partial file sits beside it
 * (same filesystem, so the rename is atomic), is synced to disk, then takes
 * the name, mode 0600. An existing `file` is never replaced: backups are not overwritten.
 */
export async function writeNewFile(file: string, write: (partial: string) => Promise<void>): Promise<void> {
  const target = path.resolve(file);
  if (existsSync(target)) throw new BackupError(`${file} already exists: a backup never overwrites a file; choose another name`);
  if (!existsSync(path.dirname(target))) throw new BackupError(`${path.dirname(target)}: no such directory`);
  const partial = path.join(path.dirname(target), `.${path.basename(target)}.partial-${process.pid}`);
  try {
    // Made first, empty and private, so that what is written into it never has wider permissions.
    closeSync(openSync(partial, "wx", 0o600));
    await write(partial);
    syncFile(partial);
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
  }
}

export function syncFile(file: string): void {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}
