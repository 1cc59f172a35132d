/**
 * How one edit writes a notebook's cells, inside its transaction: the
 * version bump that serialises writers and refuses a stale one, the cells'
 * order keys (fractional, renumbered when a key grows too long), and
 * multi-row inserts. Separate from NotebookRepository, which says what each
 * edit means; this is the one place that knows how the rows are laid out.
 */
import { Prisma } from "./generated/client";
import { byPosition, guideOf, newCellData } from "./cell-rows";
import { NotFoundError, VersionConflictError } from "./errors";
import { keysBetween } from "./fractional-index";
import type { CellInput, EditBase, StoredCell } from "./types";

export type Tx = Prisma.TransactionClient;

/** Rows per statement when writing many cells (well under SQLite's variable limit). */
export const CHUNK = 200;

/**
 * Bumps the version first, so concurrent writers serialise on the notebook row (PostgreSQL) or the database lock
 * (SQLite). An edit with an id stores it as the notebook's last commit in the same statement, so a retry can tell
 * whether this transaction was stored (NotebookRepository's edit).
 *
 * Group commits (group-commit.ts) mark the same column; sharing it is safe because one server's write queue
 * (notebook-persistence.ts) runs a notebook's edits and commits one at a time, each retried to its end before the
 * next, and only the notebook's driver writes them: a runtime loads only once its server holds the notebook's driver
 * lease (cluster/lab-cluster.ts claim()), and renames and kernel specs of an open notebook go through its runtime
 * (notebook-hub.ts). Should two servers still overlap (one cut off past its lease), an id is random, so another's
 * mark never reads as this edit stored: the retry runs and fails as a version conflict, as it did before ids.
 */
export async function bumpVersion(tx: Tx, notebookId: string, expected: number | EditBase | undefined): Promise<number> {
  const expectedVersion = typeof expected === "object" ? expected.version : expected;
  const where: Prisma.NotebookWhereInput = { id: notebookId, deletedAt: null };
  if (expectedVersion !== undefined) where.version = expectedVersion;
  const data: Prisma.NotebookUpdateManyMutationInput = { version: { increment: 1 }, updatedAt: new Date() };
  if (typeof expected === "object") data.lastCommitId = expected.editId;
  const { count } = await tx.notebook.updateMany({ where, data });
  const current = await tx.notebook.findUnique({ where: { id: notebookId }, select: { version: true, deletedAt: true } });
  if (!current) throw new NotFoundError("notebook", notebookId);
  if (count === 1) return current.version;
  if (current.deletedAt) throw new NotFoundError("notebook", notebookId, "deleted");
  throw new VersionConflictError(notebookId, expectedVersion ?? current.version, current.version);
}

export async function positions(tx: Tx, notebookId: string): Promise<Array<{ id: string; position: string }>> {
  const rows = await tx.cell.findMany({ where: { notebookId }, select: { id: true, position: true } });
  return rows.sort(byPosition);
}

/**
 * Multi-row INSERTs: Prisma's createMany costs about 0.3 ms per cell here
 * (query compiler overhead), a 2,000-cell import ten times what SQLite needs.
 * JSON columns are bound as their text: SQLite stores Prisma's Json so, and
 * PostgreSQL gives a parameter sent without a type (node-postgres sends none)
 * the type of the column it is inserted into, jsonb. One statement serves
 * both; the persistence suite runs it on both.
 */
export async function insertCells(tx: Tx, notebookId: string, cells: readonly (CellInput | StoredCell)[], keys: readonly string[]): Promise<void> {
  const now = new Date();
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  for (let i = 0; i < cells.length; i += CHUNK) {
    const rows = cells.slice(i, i + CHUNK).map((cell, offset) => {
      const data = newCellData(cell);
      const template = cell.template ?? null;
      return Prisma.sql`(${notebookId}, ${data.id}, ${keys[i + offset]!}, ${data.kind}, ${data.source}, ${data.templateId}, ${json(template?.parameters ?? null)}, ${data.templateDetached}, ${json(template ? guideOf(template) : null)}, ${data.executionCount}, ${json(cell.outputs ?? [])}, ${json(cell.lastRun ?? null)}, ${now})`;
    });
    await tx.$executeRaw`INSERT INTO "Cell" ("notebookId", "id", "position", "kind", "source", "templateId", "parameters", "templateDetached", "templateGuide", "executionCount", "outputs", "lastRun", "updatedAt") VALUES ${Prisma.join(rows)}`;
  }
}

/** Gives every cell of the notebook a fresh, short key, in the current order. */
export async function renumber(tx: Tx, notebookId: string): Promise<void> {
  const order = await positions(tx, notebookId);
  const keys = keysBetween(null, null, order.length);
  for (const [index, row] of order.entries()) {
    if (row.position !== keys[index]) {
      await tx.cell.update({ where: { notebookId_id: { notebookId, id: row.id } }, data: { position: keys[index]! }, select: { id: true } });
    }
  }
}
