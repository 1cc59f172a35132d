/**
 * The document the notebook page shows: `rebase(serverDoc, outbox, pending)`,
 * the client's copy of the server's document (every event applied, our own
 * echoes included) with the user's unacknowledged changes replayed on top.
 * Local changes show at once, and the page converges on the server's order
 * as acks arrive. Separate from the intents that make changes: this is the
 * one place that turns the server's word plus ours into what is shown.
 */
import type { NotebookDocument } from "../../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../../server/core/protocol/socket-api";
import { applyLocalAction, applyServerEvent, reuseUnchangedCells } from "../../../server/core/notebook/notebook-state";
import type { CellConflicts, ConnectionState } from "./connection";
import { rebase, type PendingEdits, type StructuralCommand } from "./pending-edits";
import { saveStatus, type SaveStatus } from "./save-status";
import { keepSelection, sameSave, type NotebookViewState } from "./notebook-view-state";
import type { ViewStore } from "../../shell/model/view-store";

/** What the view reads of the connection's bookkeeping (and the re-inserts it sends). */
export interface UnsavedChanges {
  readonly pendingEdits: PendingEdits;
  readonly outboxCommands: StructuralCommand[];
  readonly conflicts: CellConflicts;
  readonly saveError: string | null;
  sendStructural(command: StructuralCommand): void;
}

export class DocumentView {
  /** The client's copy of the server's document; null until the first snapshot. */
  private serverDoc: NotebookDocument | null = null;

  constructor(
    private readonly store: ViewStore<NotebookViewState>,
    private readonly unsaved: UnsavedChanges,
  ) {}

  /** The server's copy of one cell's text (the base an edit is typed on), if it has the cell. */
  serverSource(cellId: string): string | undefined {
    return this.serverDoc?.cells.find((c) => c.id === cellId)?.source;
  }

  get opened(): boolean {
    return this.serverDoc !== null;
  }

  snapshot(doc: NotebookDocument): void {
    this.serverDoc = doc;
    this.recompute();
  }

  /** A document event from the server: shown on the next frame (they can come by the thousand). */
  event(event: NotebookEvent): void {
    if (this.serverDoc === null) return;
    this.serverDoc = applyServerEvent(this.serverDoc, event);
    this.recompute({ batched: true });
  }

  /** The refusal of our edit is the newest word on this cell's text: take it into our copy of the server's document. */
  conflict(cellId: string, theirSource: string): void {
    if (this.serverDoc === null) return;
    this.serverDoc = applyLocalAction(this.serverDoc, { type: "set-source", cellId, source: theirSource });
  }

  /** What the page shows: the server's document with our unacknowledged changes on top. */
  recompute(opts: { batched?: boolean } = {}): void {
    if (this.serverDoc === null) return;
    let result = rebase(this.serverDoc, this.unsaved.outboxCommands, this.unsaved.pendingEdits);
    if (result.reinserts.length > 0) {
      for (const command of result.reinserts) this.unsaved.sendStructural(command);
      result = rebase(this.serverDoc, this.unsaved.outboxCommands, this.unsaved.pendingEdits);
    }
    const state = this.store.getState();
    const doc = reuseUnchangedCells(state.doc, result.doc);
    const unsavedCells = Object.keys(this.unsaved.pendingEdits).length;
    const conflicts = this.unsaved.conflicts;
    const save = this.save(state.connection);
    if (unsavedCells !== state.unsavedCells || conflicts !== state.conflicts || !sameSave(save, state.save)) {
      this.store.replace({ unsavedCells, conflicts, save });
      if (doc === state.doc) {
        this.store.emit();
        return;
      }
    }
    if (doc === state.doc) return;
    this.store.replace({ doc, ui: keepSelection(state.ui, state.doc?.cells ?? [], doc.cells) });
    if (opts.batched === true) this.store.emitSoon();
    else this.store.emit();
  }

  /** The autosave indicator for this connection state and the bookkeeping as it is now. */
  save(connection: ConnectionState): SaveStatus {
    return saveStatus({
      connection: connection.status,
      unsaved: Object.keys(this.unsaved.pendingEdits).length + this.unsaved.outboxCommands.length,
      conflicts: Object.keys(this.unsaved.conflicts).length,
      lastError: this.unsaved.saveError,
    });
  }
}
