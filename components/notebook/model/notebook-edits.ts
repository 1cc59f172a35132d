/**
 * The user's changes to the notebook's cells: typing (saved like typing, so
 * durable and merged), find-and-replace with its Undo, inserting, deleting
 * with Z to bring a cell back, moving, changing a kind, clearing outputs.
 * Structural changes show at once (the document view replays them) and go
 * to the connection's outbox. Separate from running and from the keyboard:
 * this piece only changes the document.
 */
import type { CellKind } from "../../../server/core/protocol/notebook-model";
import { sourceHash } from "../../../server/core/protocol/source-hash";
import { popDeleted, pushDeleted } from "./deleted-cells";
import { newCellId } from "../../shell/model/ids";
import { needOf } from "./notebook-access";
import type { DocumentView } from "./notebook-document-view";
import type { NotebookSender } from "./notebook-sender";
import type { NotebookViewState } from "./notebook-view-state";
import type { StructuralCommand } from "./pending-edits";
import type { ViewStore } from "../../shell/model/view-store";

/** What the edits hand to the connection. */
export interface EditTransport {
  editSource(cellId: string, source: string, kind: CellKind, index: number, base: string): void;
  sendStructural(command: StructuralCommand): void;
}

export interface EditsDeps {
  notebookId: string;
  store: ViewStore<NotebookViewState>;
  view: DocumentView;
  transport: EditTransport;
  sender: NotebookSender;
  notify(message: string): void;
  selectCell(cellId: string): void;
}

export class NotebookEdits {
  constructor(private readonly deps: EditsDeps) {}

  editSource(cellId: string, source: string): void {
    const doc = this.deps.store.getState().doc;
    if (doc === null || !this.deps.sender.allowed(needOf("set-source"))) return;
    const index = doc.cells.findIndex((c) => c.id === cellId);
    const cell = doc.cells[index];
    if (cell === undefined || cell.source === source) return;
    // The base is the server's text of the cell, or, for a cell the server does not have yet, what it was created with.
    const base = this.deps.view.serverSource(cellId) ?? cell.source;
    this.deps.transport.editSource(cellId, source, cell.kind, index, sourceHash(base));
    this.deps.view.recompute();
  }

  /** New text for several cells at once, each saved like typing. Undo is offered until the next replace. */
  replaceSources(sources: Readonly<Record<string, string>>, message: string): void {
    const doc = this.deps.store.getState().doc;
    if (doc === null || !this.deps.sender.allowed(needOf("set-source"))) return;
    const before: Record<string, string> = {};
    for (const cell of doc.cells) if (cell.id in sources) before[cell.id] = cell.source;
    for (const [cellId, source] of Object.entries(sources)) this.editSource(cellId, source);
    if (Object.keys(before).length > 0) this.deps.store.update({ replaceUndo: { message, before, after: { ...sources } } });
  }

  /** Puts back the text the last replace all changed, in the cells nobody edited since. */
  undoReplace(): void {
    const offer = this.deps.store.getState().replaceUndo;
    if (offer === null) return;
    this.deps.store.update({ replaceUndo: null });
    const cells = this.deps.store.getState().doc?.cells ?? [];
    for (const [cellId, source] of Object.entries(offer.before)) {
      const now = cells.find((c) => c.id === cellId);
      if (now !== undefined && now.source === offer.after[cellId]) this.editSource(cellId, source);
    }
  }

  dismissReplaceUndo(): void {
    if (this.deps.store.getState().replaceUndo !== null) this.deps.store.update({ replaceUndo: null });
  }

  insertCell(index: number, kind: CellKind, cellId: string): void {
    this.structural({ op: "insert-cell", notebookId: this.deps.notebookId, index, cell: { id: cellId, kind, source: "" } });
  }

  /** Deleted here: remembered for Z first. */
  deleteCell(cellId: string): void {
    this.rememberDeleted(cellId);
    this.structural({ op: "delete-cell", notebookId: this.deps.notebookId, cellId });
  }

  /** Z: the newest deleted cell back where it was (text and kind; its outputs are gone with it). */
  undoDelete(): void {
    const { doc, deletedCells } = this.deps.store.getState();
    if (doc === null || !this.deps.sender.allowed(needOf("insert-cell"))) return;
    const popped = popDeleted(deletedCells, doc.cells);
    if (popped === null) {
      this.deps.notify("No deleted cell to restore");
      return;
    }
    this.deps.store.update({ deletedCells: popped.rest });
    const id = newCellId();
    this.structural({ op: "insert-cell", notebookId: this.deps.notebookId, index: popped.index, cell: { id, kind: popped.cell.kind, source: popped.cell.source } });
    this.deps.selectCell(id);
  }

  moveCell(index: number, delta: -1 | 1): void {
    const cells = this.deps.store.getState().doc?.cells ?? [];
    const cell = cells[index];
    const toIndex = index + delta;
    if (cell === undefined || toIndex < 0 || toIndex >= cells.length) return;
    this.structural({ op: "move-cell", notebookId: this.deps.notebookId, cellId: cell.id, toIndex });
  }

  setKind(cellId: string, kind: CellKind): void {
    this.structural({ op: "set-kind", notebookId: this.deps.notebookId, cellId, kind });
  }

  clearOutputs(cellIds: readonly string[]): void {
    if (cellIds.length === 0) return;
    this.structural({ op: "clear-outputs", notebookId: this.deps.notebookId, cellIds: [...cellIds] });
  }

  private rememberDeleted(cellId: string): void {
    const { doc, deletedCells } = this.deps.store.getState();
    const cells = doc?.cells ?? [];
    const index = cells.findIndex((c) => c.id === cellId);
    const cell = cells[index];
    // An empty cell is not worth a Z (deleting the only cell adds one that would otherwise come back first).
    if (cell === undefined || (cell.source === "" && cell.outputs.length === 0)) return;
    const entry = { source: cell.source, kind: cell.kind, index, afterId: cells[index - 1]?.id ?? null };
    this.deps.store.replace({ deletedCells: pushDeleted(deletedCells, entry) });
  }

  private structural(command: StructuralCommand): void {
    if (!this.deps.view.opened || !this.deps.sender.allowed(needOf(command.op))) return;
    this.deps.transport.sendStructural(command);
    this.deps.view.recompute();
  }
}
