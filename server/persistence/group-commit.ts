/**
 * The runtime's group commit, apart from the rows it writes (run-writes.ts):
 * one transaction per commit, fenced by the notebook's driver lease when
 * several servers share the database, and marked with the commit's id so a
 * retry after a COMMIT whose answer was lost stores nothing twice. Kept apart
 * from RunRepository because it is the one write path whose correctness is
 * about transactions rather than rows (tested on SQLite and PostgreSQL by
 * tests/integration/persistence-runs.test.ts, a COMMIT whose answer is lost,
 * and driver-leases.test.ts, the fence).
 */
import { errorMessage } from "../core/errors";
import { isDatabaseUnreachable, NotDrivingError } from "./errors";
import { compactRunWrites } from "./run-write-compaction";
import { applyRunWrites, type RunWrite } from "./run-writes";
import type { Sql, SqlQueries } from "./sql";

/** A group commit's identity (RunRepository.write): which notebook, its id, and whether an attempt came before. */
export interface GroupCommit {
  notebookId: string;
  commitId: string;
  retried: boolean;
  /**
   * With several lab servers on one database: this server's id. The commit is stored only while no
   * other server holds the notebook's driver lease (NotDrivingError otherwise; see checkDriver).
   */
  driver?: string;
}

async function markCommit(tx: SqlQueries, notebookId: string, commitId: string): Promise<void> {
  await tx.run(`UPDATE "Notebook" SET "lastCommitId" = ? WHERE "id" = ?`, [commitId, notebookId]);
}

/**
 * The fence between two servers of one notebook: inside the commit's transaction, the notebook's driver
 * row is read and (PostgreSQL) locked. A server that takes the lease over updates that row, so it either
 * waits for this commit and then reads a read position that includes it, or has already taken it and
 * this commit is refused: what it would store, the new driver replays from the kernel's output once.
 * No row (released at a clean stop, or never clustered) is no other driver. SQLite has one writer at a
 * time, so its read needs no lock.
 */
async function checkDriver(tx: SqlQueries, provider: Sql["provider"], notebookId: string, serverId: string): Promise<void> {
  const lock = provider === "postgresql" ? " FOR UPDATE" : "";
  const rows = await tx.all(`SELECT "serverId" FROM "NotebookDriver" WHERE "notebookId" = ?${lock}`, [notebookId]);
  const holder = rows[0]?.serverId;
  if (typeof holder === "string" && holder !== serverId) throw new NotDrivingError(notebookId, holder);
}

/**
 * The runtime's group commit: everything its kernel's output produced
 * since the last commit (runs and executions started, outputs, metrics,
 * executions finished, the read position), in one transaction. These come
 * from the server itself (ids it made, outputs its recorder kept), so they
 * are not checked again here. Should the transaction fail, each write is
 * tried on its own, so one bad write does not take the others with it;
 * the error names those that failed. What a later write of the batch makes
 * redundant is left out first (run-write-compaction.ts).
 *
 * With `commit`, the transaction also stores its id as the notebook's last
 * commit (each write on its own stores `id/index`), so an attempt after
 * the connection dropped during a COMMIT (`retried`) first reads whether
 * that COMMIT went through and stores only what it did not: a line is
 * never stored twice.
 */
export async function writeGroupCommit(sql: Sql, batch: readonly RunWrite[], commit?: GroupCommit): Promise<void> {
  if (batch.length === 0) return;
  const writes = compactRunWrites(batch);
  let from = 0;
  if (commit?.retried) {
    const rows = await sql.all(`SELECT "lastCommitId" FROM "Notebook" WHERE "id" = ?`, [commit.notebookId]);
    const stored = rows[0]?.lastCommitId;
    if (stored === commit.commitId) return;
    if (typeof stored === "string" && stored.startsWith(`${commit.commitId}/`)) from = Number(stored.slice(commit.commitId.length + 1)) + 1;
  }
  if (from === 0) {
    try {
      const committed = await sql.transaction(async (tx) => {
        if (commit?.driver) await checkDriver(tx, sql.provider, commit.notebookId, commit.driver);
        const done = await applyRunWrites(tx, writes);
        if (commit) await markCommit(tx, commit.notebookId, commit.commitId);
        return done;
      });
      committed();
      return;
    } catch (error) {
      // Unreachable: the caller's queue tries it again (notebook-persistence.ts), and the check above tells.
      if (writes.length === 1 || isDatabaseUnreachable(error) || error instanceof NotDrivingError) throw error;
    }
  }
  const failed: string[] = [];
  for (const [index, write] of writes.entries()) {
    if (index < from) continue;
    try {
      const committed = await sql.transaction(async (tx) => {
        if (commit?.driver) await checkDriver(tx, sql.provider, commit.notebookId, commit.driver);
        const done = await applyRunWrites(tx, [write]);
        if (commit) await markCommit(tx, commit.notebookId, `${commit.commitId}/${index}`);
        return done;
      });
      committed();
    } catch (error) {
      if (error instanceof NotDrivingError) throw error;
      // With a commit id, the writes stored so far are marked: the next attempt goes on after them.
      if (commit && isDatabaseUnreachable(error)) throw error;
      // Said in words, not the driver's: some writes are stored now, so this must not read as "unreachable" (retried whole).
      if (isDatabaseUnreachable(error)) failed.push(`${write.kind}: the database went away`);
      else failed.push(`${write.kind}: ${errorMessage(error)}`);
    }
  }
  if (failed.length > 0) throw new Error(`${failed.length} of ${writes.length} writes failed: ${failed.join("; ")}`);
}
