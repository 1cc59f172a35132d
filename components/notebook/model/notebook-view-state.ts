/**
 * What the notebook page shows, as one immutable value (the document with the
 * user's unsaved changes on top, the keyboard machine's state, notices,
 * offers of undo…), and the pure rules for moving it on. Separate from the
 * controller so the pieces that write it share one shape and the rules are
 * tested without a socket.
 */
import type { Cell, NotebookDocument } from "../../../server/core/protocol/notebook-model";
import type { NotebookAccessLevel } from "../../../server/core/protocol/accounts-model";
import type { HostView } from "../../../server/core/protocol/hosts-model";
import { initialCommandModeState, type CommandModeState, type PanelCommand } from "./command-mode";
import type { CellConflicts, ConnectionState } from "./connection";
import type { DeletedCell } from "./deleted-cells";
import { saveStatusText, type SaveStatus } from "./save-status";

export interface Notice {
  id: number;
  message: string;
}

/** A cell just reattached to its template: the toast offering to put its edits back. */
export interface ReattachUndoOffer {
  cellId: string;
  templateId: string;
}

export interface ReplaceUndoOffer {
  message: string;
  /** Each changed cell's text before, and after, the replace. */
  before: Readonly<Record<string, string>>;
  after: Readonly<Record<string, string>>;
}

export type OpenPanel = Exclude<PanelCommand, "toggle-toc">;

export interface NotebookViewState {
  doc: NotebookDocument | null;
  connection: ConnectionState;
  ui: CommandModeState;
  /** Cells whose typed text the server has not confirmed yet. */
  unsavedCells: number;
  /** Cells whose edit was refused because another tab changed them first: the user chooses. */
  conflicts: CellConflicts;
  /** The autosave indicator. */
  save: SaveStatus;
  notices: readonly Notice[];
  /** A refused form change per cell (e.g. a cross-parameter limit), shown under its form until the next change. */
  formErrors: Readonly<Record<string, string>>;
  /** Just reattached (its edits replaced): Undo is offered for a while. */
  undo: ReattachUndoOffer | null;
  /** The lab's hosts as last listed (the kernel spec form, GPU names in the header); null until asked. */
  hosts: readonly HostView[] | null;
  /** What this viewer may do with the notebook, as the server said on opening; null until it has. */
  access: NotebookAccessLevel | null;
  /** The owner's name, for a notebook someone else shared (null for one's own, or until known). */
  owner: string | null;
  /** The dialog or bar open over the notebook (shortcuts help, command palette, find and replace), if any. */
  panel: OpenPanel | null;
  /** The table of contents is shown beside the cells. */
  tocOpen: boolean;
  /** Cells deleted here that Z can put back, newest last. */
  deletedCells: readonly DeletedCell[];
  /** The last "replace all": Undo puts the cells' previous text back. */
  replaceUndo: ReplaceUndoOffer | null;
}

/** The page before the notebook opened (the autosave indicator says "saved" until the document view says otherwise). */
export function initialViewState(connection: ConnectionState, unsavedCells: number): NotebookViewState {
  return {
    doc: null,
    connection,
    ui: initialCommandModeState,
    unsavedCells,
    conflicts: {},
    save: { state: "saved" },
    notices: [],
    formErrors: {},
    undo: null,
    hosts: null,
    access: null,
    owner: null,
    panel: null,
    tocOpen: false,
    deletedCells: [],
    replaceUndo: null,
  };
}

const MAX_NOTICES = 4;

/** The notices with one more (the newest few are kept). */
export function withNotice(notices: readonly Notice[], id: number, message: string): Notice[] {
  return [...notices, { id, message }].slice(-MAX_NOTICES);
}

/** The form errors with this cell's set (or cleared with null); the same object when nothing changes. */
export function withFormError(formErrors: Readonly<Record<string, string>>, cellId: string, error: string | null): Readonly<Record<string, string>> {
  if ((formErrors[cellId] ?? null) === error) return formErrors;
  const next = { ...formErrors };
  if (error === null) delete next[cellId];
  else next[cellId] = error;
  return next;
}

export function sameSave(a: SaveStatus, b: SaveStatus): boolean {
  return a.state === b.state && saveStatusText(a) === saveStatusText(b);
}

/** After the cell list changed, keep the selection on an existing cell, near where it was. */
export function keepSelection(ui: CommandModeState, before: readonly Cell[], after: readonly Cell[]): CommandModeState {
  if (ui.selectedId !== null && after.some((c) => c.id === ui.selectedId)) return ui;
  const next = after[Math.min(ui.selectedId === null ? 0 : Math.max(0, before.findIndex((c) => c.id === ui.selectedId)), after.length - 1)];
  if (next === undefined) return ui.selectedId === null ? ui : { ...ui, selectedId: null, mode: "command" };
  return { ...ui, selectedId: next.id, mode: "command" };
}
