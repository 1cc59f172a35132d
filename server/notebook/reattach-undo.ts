/**
 * Reattaching a detached templated cell replaces the user's edits with the
 * template's code. The runtime keeps what each reattach replaced, so that
 * Undo puts back exactly that code and that detached template; the undo is
 * then an edit like any other (saved before viewers see it).
 */
import type { CellTemplate, NotebookDocument } from "../core/protocol/notebook-model";
import { CommandError } from "../errors";
import { findCell } from "./notebook-ops";

/** What a reattach replaced: the cell as it was, detached. */
export interface ReplacedCell {
  source: string;
  template: CellTemplate;
}

/** Reattaches kept per notebook: an undo is offered for seconds, so only the latest few are worth memory (sources may be large). */
const MAX_KEPT = 16;

export class ReattachUndo {
  private readonly kept = new Map<string, ReplacedCell>();

  /** A reattach of `cellId` is about to replace this. */
  remember(cellId: string, replaced: ReplacedCell): void {
    this.kept.delete(cellId);
    this.kept.set(cellId, replaced);
    while (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
  }

  /**
   * What to put back for an undo of the last reattach of `cellId`; refuses
   * (nothing changes) when there is none, or the cell is no longer attached
   * to that template (detached again since, or gone).
   */
  take(doc: NotebookDocument, cellId: string): ReplacedCell {
    const cell = findCell(doc, cellId);
    const replaced = this.kept.get(cellId);
    if (replaced === undefined) throw new CommandError("conflict", `there is no reattach of cell ${cellId} to undo`);
    if (cell.template === null || cell.template.detached || cell.template.id !== replaced.template.id) {
      this.kept.delete(cellId);
      throw new CommandError("conflict", `cell ${cellId} changed since it was reattached; there is no reattach to undo`);
    }
    this.kept.delete(cellId);
    return replaced;
  }
}
