/**
 * The cells deleted from this page, newest last, so that Z can put them back
 * (several levels, as in JupyterLab). Each remembers its text, kind and the
 * cell it followed: restored, it goes back after that cell if it is still
 * there, else at its old index. The restore is an ordinary insert-cell
 * command, so it is stored on the server like any edit.
 */
import type { CellKind } from "../../../server/core/protocol/notebook-model";

export interface DeletedCell {
  source: string;
  kind: CellKind;
  /** Where it stood when deleted. */
  index: number;
  /** The cell just above it then (null: it was the first). */
  afterId: string | null;
}

/** How many deletions Z can undo. */
export const MAX_UNDO_DELETES = 20;

export function pushDeleted(stack: readonly DeletedCell[], cell: DeletedCell): DeletedCell[] {
  return [...stack, cell].slice(-MAX_UNDO_DELETES);
}

/** Where the newest deleted cell goes back in `cells`, and the stack without it; null when there is nothing to undo. */
export function popDeleted(
  stack: readonly DeletedCell[],
  cells: ReadonlyArray<{ id: string }>,
): { cell: DeletedCell; index: number; rest: DeletedCell[] } | null {
  const cell = stack[stack.length - 1];
  if (cell === undefined) return null;
  const after = cell.afterId === null ? -1 : cells.findIndex((c) => c.id === cell.afterId);
  const index = cell.afterId === null ? 0 : after !== -1 ? after + 1 : Math.min(cell.index, cells.length);
  return { cell, index, rest: stack.slice(0, -1) };
}
