/**
 * `npm run lab -- backup <file>` and `restore <file>`: the lab's database,
 * wherever the lab's settings put it (MGPULAB_DATABASE_URL, else the SQLite
 * file under MGPULAB_DATA_DIR), copied out while the lab serves, and put
 * back only while no lab runs on it. A backup restores into the kind of
 * database it came from; moving between SQLite and PostgreSQL is not this.
 */
import { resolveDatabaseTarget, type DatabaseTarget, type TargetOptions } from "../persistence/database-target";
import { BackupError, backupKindOf } from "./backup-file";
import { backupPostgres, restorePostgres } from "./postgres-backup";
import { backupSqlite, restoreSqlite } from "./sqlite-backup";

export { BackupError } from "./backup-file";

/** Copies the lab's database to `file` (a new file); says what it copied. */
export function backupLab(file: string, where: TargetOptions = {}): Promise<string> {
  const target = resolveDatabaseTarget(where);
  return target.provider === "sqlite" ? backupSqlite(target.file, file) : backupPostgres(target, file);
}

/** Replaces the lab's database with the backup in `file`; refuses while a lab runs on it. Says what it restored. */
export async function restoreLab(file: string, where: TargetOptions = {}): Promise<string> {
  const target = resolveDatabaseTarget(where);
  const kind = backupKindOf(file);
  if (kind !== target.provider) throw new BackupError(mismatch(file, kind, target));
  return target.provider === "sqlite" ? restoreSqlite(file, target.file) : restorePostgres(file, target);
}

function mismatch(file: string, kind: "sqlite" | "postgresql", target: DatabaseTarget): string {
  return kind === "sqlite"
    ? `${file} is a backup of a SQLite lab, and this lab is on PostgreSQL (${target.description}): restore it with MGPULAB_DATABASE_URL unset and MGPULAB_DATA_DIR naming the data directory`
    : `${file} is a backup of a lab on PostgreSQL, and this lab uses SQLite (${target.description}): set MGPULAB_DATABASE_URL to the database to restore it into`;
}
