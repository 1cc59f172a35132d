/**
 * One open notebook in the browser: the document (notebook-state.ts), the
 * keyboard machine (command-mode.ts) and the socket (connection.ts) wired
 * together behind intent methods that components call. Components read its
 * state through `subscribe`/`getState` (React's useSyncExternalStore); no
 * behaviour lives in React hooks.
 *
 * The page shows `rebase(serverDoc, outbox, pending)`: the client's copy of
 * the server's document (every event applied, our own echoes included) with
 * the user's unacknowledged changes replayed on top. Local changes show at
 * once, and the page converges on the server's order as acks arrive.
 *
 * Server events can arrive by the thousand (streamed output), so the
 * notification for them is batched to one per animation frame; the user's
 * own actions notify at once.
 */
import type { DevicePlan } from "../../server/core/protocol/kernel-messages";
import type { MetricPointMessage } from "../../server/core/protocol/metrics-model";
import type { Cell, CellKind, KernelStatus, NotebookDocument, ParameterValue } from "../../server/core/protocol/notebook-model";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import type { NotebookAnswer } from "../../server/core/protocol/ops-notebook";
import type { LabAnswer, LabOp, LabSend } from "../../server/core/protocol/ops-lab";
import type { HostView } from "../../server/core/protocol/hosts-model";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { handleKey, initialCommandModeState, runCommand, type CommandAction, type CommandModeState, type KeyInput, type PanelCommand } from "./command-mode";
import { popDeleted, pushDeleted, type DeletedCell } from "./deleted-cells";
import type { ShortcutCommand } from "./shortcuts";
import {
  NotebookConnection,
  type CellConflicts,
  type ConflictChoice,
  type ConnectionOptions,
  type ConnectionState,
  type ControlCommand,
} from "./connection";
import { newCellId } from "./ids";
import { labNeedOf, mayDo, needOf, refusedText, type AccessNeed } from "./notebook-access";
import type { KernelAssist } from "./kernel-assist";
import { applyLocalAction, applyServerEvent, reuseUnchangedCells } from "../../server/core/notebook/notebook-state";
import { rebase, type StructuralCommand } from "./pending-edits";
import { saveStatus, saveStatusText, type SaveStatus } from "./save-status";
import { nextFrame } from "./view-store";

export interface Notice {
  id: number;
  message: string;
}

/** A cell just reattached to its template: the toast offering to put its edits back. */
export interface ReattachUndoOffer {
  cellId: string;
  templateId: string;
}

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

export interface ReplaceUndoOffer {
  message: string;
  /** Each changed cell's text before, and after, the replace. */
  before: Readonly<Record<string, string>>;
  after: Readonly<Record<string, string>>;
}

export type OpenPanel = Exclude<PanelCommand, "toggle-toc">;

/** Live metric points of one cell, for its charts (outside the document: they never re-render cells). */
export interface CellMetricFeed {
  subscribe(listener: (executionId: string, points: MetricPointMessage[]) => void): () => void;
  /** A reconnect served a snapshot: live points sent meanwhile never arrive, so charts reload. */
  subscribeResync(listener: () => void): () => void;
  /** The devices each variant of the cell's run ran on, as the kernel reports them. */
  subscribePlans(listener: (executionId: string, tag: string, plan: DevicePlan) => void): () => void;
}

export interface ControllerOptions {
  connection?: ConnectionOptions;
  /** How batched notifications are scheduled (default: next animation frame). */
  schedule?: (run: () => void) => void;
  /** Asks before a restart throws away a live kernel's state (default: yes without asking). */
  confirm?: (question: string) => boolean;
  /** How long the Undo of a reattach is offered (ms). */
  undoMs?: number;
}

export const RESTART_QUESTION = "Restart the kernel? Every variable in this notebook is lost.";

/** Only a running kernel has state a restart would throw away; a dead or stopped one restarts without a question. */
export function restartLosesState(kernel: KernelStatus["state"] | undefined): boolean {
  return kernel === "idle" || kernel === "busy" || kernel === "interrupting";
}

const MAX_NOTICES = 4;

export class NotebookController {
  private state: NotebookViewState;
  /** The client's copy of the server's document. */
  private serverDoc: NotebookDocument | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly connection: NotebookConnection;
  private notifyScheduled = false;
  private noticeSeq = 0;
  private readonly schedule: (run: () => void) => void;
  private readonly confirm: (question: string) => boolean;
  private readonly pointListeners = new Map<string, Set<(executionId: string, points: MetricPointMessage[]) => void>>();
  private readonly planListeners = new Map<string, Set<(executionId: string, tag: string, plan: DevicePlan) => void>>();
  private readonly feeds = new Map<string, CellMetricFeed>();
  private readonly resyncListeners = new Set<() => void>();
  private snapshots = 0;
  private readonly undoMs: number;
  private undoTimer: ReturnType<typeof setTimeout> | null = null;
  /** Cells the page leaves out (a led workshop's unrevealed steps): "Run all" leaves them out too, as the server would refuse them. */
  private unshown: ReadonlySet<string> = new Set();

  constructor(
    readonly notebookId: string,
    options: ControllerOptions = {},
  ) {
    this.schedule = options.schedule ?? nextFrame;
    this.confirm = options.confirm ?? (() => true);
    this.undoMs = options.undoMs ?? 10_000;
    this.connection = new NotebookConnection(
      notebookId,
      {
        state: (connection) => this.update({ connection, save: this.computeSave(connection) }),
        access: (access) => {
          if (access !== this.state.access) this.update({ access });
          // Asked again on a reopen until known: the badge names who shared it.
          if (access !== "edit" && this.state.owner === null) void this.loadOwner();
        },
        snapshot: (doc) => {
          this.serverDoc = doc;
          this.recompute();
          // The first snapshot is the page opening; later ones replace a journal we could not resume.
          if (this.snapshots++ > 0) for (const listener of [...this.resyncListeners]) listener();
        },
        event: (event) => {
          if (event.type === "cell-metric-points") {
            for (const listener of this.pointListeners.get(event.cellId) ?? []) listener(event.executionId, event.points);
            return;
          }
          if (event.type === "cell-device-plan") {
            for (const listener of this.planListeners.get(event.cellId) ?? []) listener(event.executionId, event.tag, event.plan);
            return;
          }
          if (this.serverDoc === null) return;
          this.serverDoc = applyServerEvent(this.serverDoc, event);
          this.recompute({ batched: true });
        },
        conflict: (cellId, theirSource) => {
          // The refusal is the newest word on this cell's text: take it into our copy of the server's document.
          if (this.serverDoc === null) return;
          this.serverDoc = applyLocalAction(this.serverDoc, { type: "set-source", cellId, source: theirSource });
        },
        changed: () => this.recompute(),
        error: (message) => this.notify(message),
      },
      options.connection,
    );
    this.state = {
      doc: null,
      connection: this.connection.state,
      ui: initialCommandModeState,
      unsavedCells: Object.keys(this.connection.pendingEdits).length,
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
    this.state = { ...this.state, save: this.computeSave(this.state.connection) };
  }

  // ---- store -----------------------------------------------------------------

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): NotebookViewState => this.state;

  start(): void {
    this.connection.start();
  }

  stop(): void {
    this.dismissUndo();
    this.connection.stop();
  }

  setBrowserOnline(online: boolean): void {
    this.connection.setBrowserOnline(online);
  }

  /** The page is going away: send what can be sent, keep the rest as a draft. */
  pageHidden(): void {
    this.connection.flushSources();
    this.connection.writeDraftNow();
  }

  /** The tab was hidden or shown: only visible tabs keep the kernel in use. */
  setVisible(visible: boolean): void {
    this.connection.setVisible(visible);
  }

  dismissNotice(id: number): void {
    this.update({ notices: this.state.notices.filter((n) => n.id !== id) });
  }

  // ---- selection and modes ----------------------------------------------------------

  /** A key pressed in command mode, or one of the run/escape keys inside an editor. */
  handleKey(input: KeyInput): boolean {
    const cells = this.state.doc?.cells ?? [];
    const result = handleKey(this.state.ui, input, { cells, newCellId: newCellId() });
    // A key whose action this viewer may not do changes nothing (not even the selection a new cell would take).
    const refused = result.actions.map(actionNeed).find((need) => need !== null && !mayDo(this.state.access, need));
    if (refused !== undefined && refused !== null) {
      this.allowed(refused);
      this.update({ ui: { ...this.state.ui, chord: null } });
      return result.handled;
    }
    this.update({ ui: result.state });
    for (const action of result.actions) this.perform(action);
    return result.handled;
  }

  /** A shortcut's command chosen elsewhere (the command palette): the same effect as its keys. */
  runCommand(command: ShortcutCommand): void {
    const cells = this.state.doc?.cells ?? [];
    const result = runCommand({ ...this.state.ui, mode: "command" }, command, { cells, newCellId: newCellId() });
    const refused = result.actions.map(actionNeed).find((need) => need !== null && !mayDo(this.state.access, need));
    if (refused !== undefined && refused !== null) {
      this.allowed(refused);
      return;
    }
    this.update({ ui: result.state });
    for (const action of result.actions) this.perform(action);
  }

  /** Opens a dialog or bar (closing any other), or closes it with null. */
  setPanel(panel: OpenPanel | null): void {
    if (this.state.panel !== panel) this.update({ panel });
  }

  toggleToc(): void {
    this.update({ tocOpen: !this.state.tocOpen });
  }

  /** Z: the newest deleted cell back where it was (text and kind; its outputs are gone with it). */
  undoDelete(): void {
    const doc = this.state.doc;
    if (doc === null || !this.allowed(needOf("insert-cell"))) return;
    const popped = popDeleted(this.state.deletedCells, doc.cells);
    if (popped === null) {
      this.notify("No deleted cell to restore");
      return;
    }
    this.update({ deletedCells: popped.rest });
    const id = newCellId();
    this.structural({ op: "insert-cell", notebookId: this.notebookId, index: popped.index, cell: { id, kind: popped.cell.kind, source: popped.cell.source } });
    this.selectCell(id);
  }

  selectCell(cellId: string, mode: CommandModeState["mode"] = "command"): void {
    const ui = this.state.ui;
    if (ui.selectedId === cellId && ui.mode === mode) return;
    this.update({ ui: { ...ui, selectedId: cellId, mode, chord: null } });
  }

  editorFocused(cellId: string): void {
    this.selectCell(cellId, "edit");
  }

  editorBlurred(cellId: string): void {
    const ui = this.state.ui;
    if (ui.mode === "edit" && ui.selectedId === cellId) this.update({ ui: { ...ui, mode: "command" } });
  }

  // ---- document edits -----------------------------------------------------------

  editSource(cellId: string, source: string): void {
    const doc = this.state.doc;
    if (doc === null || !this.allowed(needOf("set-source"))) return;
    const index = doc.cells.findIndex((c) => c.id === cellId);
    const cell = doc.cells[index];
    if (cell === undefined || cell.source === source) return;
    // The base is the server's text of the cell, or, for a cell the server does not have yet, what it was created with.
    const base = this.serverDoc?.cells.find((c) => c.id === cellId)?.source ?? cell.source;
    this.connection.editSource(cellId, source, cell.kind, index, sourceHash(base));
    this.recompute();
  }

  /**
   * Find and replace: new text for several cells at once, each saved like typing (so it is durable and
   * merges with other edits the same way). Undo is offered until the next replace.
   */
  replaceSources(sources: Readonly<Record<string, string>>, message: string): void {
    const doc = this.state.doc;
    if (doc === null || !this.allowed(needOf("set-source"))) return;
    const before: Record<string, string> = {};
    for (const cell of doc.cells) if (cell.id in sources) before[cell.id] = cell.source;
    for (const [cellId, source] of Object.entries(sources)) this.editSource(cellId, source);
    if (Object.keys(before).length > 0) this.update({ replaceUndo: { message, before, after: { ...sources } } });
  }

  /** Puts back the text the last replace all changed, in the cells nobody edited since. */
  undoReplace(): void {
    const offer = this.state.replaceUndo;
    if (offer === null) return;
    this.update({ replaceUndo: null });
    const cells = this.state.doc?.cells ?? [];
    for (const [cellId, source] of Object.entries(offer.before)) {
      const now = cells.find((c) => c.id === cellId);
      if (now !== undefined && now.source === offer.after[cellId]) this.editSource(cellId, source);
    }
  }

  dismissReplaceUndo(): void {
    if (this.state.replaceUndo !== null) this.update({ replaceUndo: null });
  }

  /** The user's answer to "this cell was changed in another tab". */
  resolveConflict(cellId: string, choice: ConflictChoice): void {
    this.connection.resolveConflict(cellId, choice);
  }

  // ---- the notebook itself ---------------------------------------------------------

  /** Rename; every viewer (this one included) gets the new title from the server's event. */
  async rename(title: string): Promise<boolean> {
    const trimmed = title.trim();
    if (trimmed === "" || trimmed === this.state.doc?.title) return trimmed !== "";
    if (!this.allowedLab("rename-notebook")) return false;
    return this.lab({ op: "rename-notebook", notebookId: this.notebookId, title: trimmed }, "Renaming");
  }

  /** Undo a deletion (from the banner shown while the notebook is deleted). */
  async restore(): Promise<boolean> {
    if (!this.allowedLab("restore-notebook")) return false;
    return this.lab({ op: "restore-notebook", notebookId: this.notebookId }, "Restoring");
  }

  insertCell(index: number, kind: CellKind = "code", cellId: string = newCellId()): string {
    this.structural({ op: "insert-cell", notebookId: this.notebookId, index, cell: { id: cellId, kind, source: "" } });
    return cellId;
  }

  /** Toolbar "+": a code cell below the selected one, selected. */
  insertBelowSelected(): void {
    if (!this.allowed(needOf("insert-cell"))) return;
    const index = this.selectedIndex();
    const id = this.insertCell(index === -1 ? (this.state.doc?.cells.length ?? 0) : index + 1);
    this.selectCell(id);
  }

  deleteSelected(): void {
    const id = this.state.ui.selectedId;
    if (id !== null) this.handleKeySequence(["d", "d"]);
  }

  moveSelected(delta: -1 | 1): void {
    const index = this.selectedIndex();
    const cell = this.state.doc?.cells[index];
    if (cell === undefined) return;
    const toIndex = index + delta;
    if (toIndex < 0 || toIndex >= (this.state.doc?.cells.length ?? 0)) return;
    this.structural({ op: "move-cell", notebookId: this.notebookId, cellId: cell.id, toIndex });
  }

  setKind(cellId: string, kind: CellKind): void {
    this.structural({ op: "set-kind", notebookId: this.notebookId, cellId, kind });
  }

  clearOutputs(cellIds: readonly string[]): void {
    if (cellIds.length === 0) return;
    this.structural({ op: "clear-outputs", notebookId: this.notebookId, cellIds: [...cellIds] });
  }

  clearAllOutputs(): void {
    this.clearOutputs((this.state.doc?.cells ?? []).filter((c) => c.outputs.length > 0).map((c) => c.id));
  }

  // ---- running -------------------------------------------------------------------

  /** Toolbar ▶: run the selected cell and advance (Shift+Enter). */
  runSelectedAndAdvance(): void {
    this.handleKey({ key: "Enter", shift: true, ctrl: false, alt: false, meta: false, at: now() });
  }

  runAll(): void {
    this.runCells((this.state.doc?.cells ?? []).filter((c) => !this.unshown.has(c.id)).map((c) => c.id));
  }

  /** The cells the page does not show; Run all runs the others. */
  setUnshownCells(cellIds: ReadonlySet<string>): void {
    this.unshown = cellIds;
  }

  /**
   * Code cells run from the text the server stores, which the connection
   * saves first; each carries the hash of the text the user sees, so the
   * server refuses to run anything else. Markdown cells only render.
   */
  runCells(cellIds: readonly string[]): void {
    void this.runCellsAnswered(cellIds);
  }

  /**
   * `runCells`, resolving with the server's answer to the execute (a refusal
   * is also shown as a notice); null when nothing was sent (no code cell, a
   * conflict to settle first, no right to run). What a caller that must know
   * whether the run was taken waits on (the chaos run's participants).
   */
  runCellsAnswered(cellIds: readonly string[]): Promise<NotebookAnswer<ControlCommand["op"]> | null> {
    const doc = this.state.doc;
    if (doc === null) return Promise.resolve(null);
    const wanted = new Set(cellIds);
    const code = doc.cells.filter((c) => wanted.has(c.id) && c.kind === "code");
    if (code.length === 0) return Promise.resolve(null);
    // A run takes the stored text: settle a conflict first, never overwrite silently.
    if (code.some((c) => c.id in this.connection.conflicts)) {
      this.notify("A cell to run was changed in another tab: choose “Use theirs” or “Keep mine” first.");
      return Promise.resolve(null);
    }
    const sourceHashes: Record<string, string> = {};
    for (const c of code) sourceHashes[c.id] = sourceHash(c.source);
    return this.control({ op: "execute", notebookId: this.notebookId, cellIds: code.map((c) => c.id), sourceHashes });
  }

  interrupt(): void {
    void this.control({ op: "interrupt", notebookId: this.notebookId });
  }

  // ---- guided scenarios ----------------------------------------------------------

  /** A form change: the server re-renders every attached cell of the scenario, or refuses and nothing changes. */
  setParameters(cellId: string, values: Record<string, ParameterValue>): void {
    if (!this.allowed(needOf("set-parameters"))) return;
    this.setFormError(cellId, null);
    void this.connection.sendControl({ op: "set-parameters", notebookId: this.notebookId, cellId, values }).then((ack) => {
      if (!ack.ok) this.setFormError(cellId, ack.error);
    });
  }

  detachTemplate(cellId: string): void {
    this.setFormError(cellId, null);
    void this.control({ op: "detach-template", notebookId: this.notebookId, cellId });
  }

  /** Replaces the cell's edits with the template's code; the server keeps the edits, and Undo is offered for a while. */
  reattachTemplate(cellId: string): void {
    if (!this.allowed(needOf("reattach-template"))) return;
    const templateId = this.state.doc?.cells.find((c) => c.id === cellId)?.template?.id ?? "";
    void this.connection.sendControl({ op: "reattach-template", notebookId: this.notebookId, cellId }).then((ack) => {
      if (!ack.ok) {
        this.notify(`Reattaching the cell failed: ${ack.error}`);
        return;
      }
      this.update({ undo: { cellId, templateId } });
      if (this.undoTimer !== null) clearTimeout(this.undoTimer);
      this.undoTimer = setTimeout(() => this.dismissUndo(), this.undoMs);
    });
  }

  /** Undo the reattach the toast is about: the server puts the cell's detached code back. */
  undoReattach(): void {
    const offer = this.state.undo;
    if (offer === null) return;
    this.dismissUndo();
    void this.control({ op: "undo-reattach", notebookId: this.notebookId, cellId: offer.cellId });
  }

  dismissUndo(): void {
    if (this.undoTimer !== null) clearTimeout(this.undoTimer);
    this.undoTimer = null;
    if (this.state.undo !== null) this.update({ undo: null });
  }

  commitPrediction(questionId: string, choice: string): void {
    void this.commitPredictionAnswered(questionId, choice);
  }

  /** `commitPrediction`, resolving with the server's answer (null when this viewer may not commit). */
  commitPredictionAnswered(questionId: string, choice: string): Promise<NotebookAnswer<ControlCommand["op"]> | null> {
    return this.control({ op: "commit-prediction", notebookId: this.notebookId, questionId, choice });
  }

  /** The same object per cell, so components can depend on it. */
  /**
   * The kernel's completions and inspection for the editors (Tab, Shift+Tab).
   * Any failure (offline, refused, slow, busy kernel) is "unavailable": the
   * editor then falls back to words of the cell, it never waits on it.
   */
  readonly kernelAssist: KernelAssist = {
    complete: async (code, cursor) => {
      const ack = await this.connection.ask({ op: "complete", notebookId: this.notebookId, code, cursor });
      if (!ack.ok) return { status: "unavailable", reason: ack.error };
      return ack.completion;
    },
    inspect: async (code, cursor) => {
      const ack = await this.connection.ask({ op: "inspect", notebookId: this.notebookId, code, cursor });
      if (!ack.ok) return { status: "unavailable", reason: ack.error };
      return ack.inspection;
    },
  };

  metricFeed(cellId: string): CellMetricFeed {
    let feed = this.feeds.get(cellId);
    if (!feed) {
      feed = {
        subscribe: (listener) => {
          let listeners = this.pointListeners.get(cellId);
          if (!listeners) this.pointListeners.set(cellId, (listeners = new Set()));
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        subscribeResync: (listener) => {
          this.resyncListeners.add(listener);
          return () => this.resyncListeners.delete(listener);
        },
        subscribePlans: (listener) => {
          let listeners = this.planListeners.get(cellId);
          if (!listeners) this.planListeners.set(cellId, (listeners = new Set()));
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      };
      this.feeds.set(cellId, feed);
    }
    return feed;
  }

  /** Restarts at once: a dead kernel has nothing left to lose. */
  restart(): void {
    void this.control({ op: "restart", notebookId: this.notebookId });
  }

  /** A notebook-list command over this page's socket (the Share panel's), answered by the server or refused while offline. */
  labCommand<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.connection.sendLab(command);
  }

  /** The owner's name of a notebook shared with this viewer, from the notebook list (the open answer carries only the access). */
  private async loadOwner(): Promise<void> {
    const ack = await this.connection.sendLab({ op: "list-notebooks" });
    const item = ack.ok ? ack.notebooks.find((n) => n.id === this.notebookId) : undefined;
    if (item !== undefined && item.access !== "edit") this.update({ owner: item.owner.name });
  }

  /** Lists the lab's hosts (for the kernel spec form and the GPU names in the header); a failure keeps the last list. */
  async loadHosts(): Promise<void> {
    const ack = await this.connection.sendLab({ op: "list-hosts" });
    if (ack.ok) this.update({ hosts: ack.hosts });
  }

  /** Where the next kernel starts; resolves with the server's refusal in words, or null when it took it. */
  async setKernelSpec(hostId: string, gpus: number): Promise<string | null> {
    const need = needOf("set-kernel-spec");
    if (!mayDo(this.state.access, need)) return refusedText(this.state.access, need);
    const ack = await this.connection.sendControl({ op: "set-kernel-spec", notebookId: this.notebookId, hostId, gpus });
    return ack.ok ? null : ack.error;
  }

  /** Restart from the toolbar or 0, 0: a live kernel's state is lost, so ask first (as Jupyter does). */
  requestRestart(): void {
    if (!this.allowed(needOf("restart"))) return;
    if (restartLosesState(this.state.doc?.kernel.state) && !this.confirm(RESTART_QUESTION)) return;
    this.restart();
  }

  // ---- internals -------------------------------------------------------------------

  private perform(action: CommandAction): void {
    switch (action.type) {
      case "run":
        this.runCells(action.cellIds);
        return;
      case "insert-cell":
        this.insertCell(action.index, action.kind, action.cellId);
        return;
      case "delete-cell":
        this.rememberDeleted(action.cellId);
        this.structural({ op: "delete-cell", notebookId: this.notebookId, cellId: action.cellId });
        return;
      case "undo-delete":
        this.undoDelete();
        return;
      case "open":
        if (action.panel === "toggle-toc") this.toggleToc();
        else this.setPanel(action.panel);
        return;
      case "set-kind":
        this.setKind(action.cellId, action.kind);
        return;
      case "interrupt":
        this.interrupt();
        return;
      case "restart":
        this.requestRestart();
        return;
    }
  }

  private rememberDeleted(cellId: string): void {
    const cells = this.state.doc?.cells ?? [];
    const index = cells.findIndex((c) => c.id === cellId);
    const cell = cells[index];
    // An empty cell is not worth a Z (deleting the only cell adds one that would otherwise come back first).
    if (cell === undefined || (cell.source === "" && cell.outputs.length === 0)) return;
    const entry = { source: cell.source, kind: cell.kind, index, afterId: cells[index - 1]?.id ?? null };
    this.state = { ...this.state, deletedCells: pushDeleted(this.state.deletedCells, entry) };
  }

  /** Whether this viewer may do what an intent needs; a dropped intent says why (a key pressed on a shared notebook). */
  /** A lab op about this notebook (rename, restore): what it needs of it, as the server checks it. */
  private allowedLab(op: LabOp): boolean {
    const need = labNeedOf(op);
    return need === null || this.allowed(need);
  }

  private allowed(need: AccessNeed): boolean {
    if (mayDo(this.state.access, need)) return true;
    if (this.state.doc !== null) this.notify(refusedText(this.state.access, need));
    return false;
  }

  private handleKeySequence(keys: string[]): void {
    const ui = this.state.ui;
    this.update({ ui: { ...ui, mode: "command", chord: null } });
    for (const key of keys) this.handleKey({ key, shift: false, ctrl: false, alt: false, meta: false, at: now() });
  }

  private structural(command: StructuralCommand): void {
    if (this.serverDoc === null || !this.allowed(needOf(command.op))) return;
    this.connection.sendStructural(command);
    this.recompute();
  }

  /** What the page shows: the server's document with our unacknowledged changes on top. */
  private recompute(opts: { batched?: boolean } = {}): void {
    if (this.serverDoc === null) return;
    let result = rebase(this.serverDoc, this.connection.outboxCommands, this.connection.pendingEdits);
    if (result.reinserts.length > 0) {
      for (const command of result.reinserts) this.connection.sendStructural(command);
      result = rebase(this.serverDoc, this.connection.outboxCommands, this.connection.pendingEdits);
    }
    const doc = reuseUnchangedCells(this.state.doc, result.doc);
    const unsavedCells = Object.keys(this.connection.pendingEdits).length;
    const conflicts = this.connection.conflicts;
    const save = this.computeSave(this.state.connection);
    if (unsavedCells !== this.state.unsavedCells || conflicts !== this.state.conflicts || !sameSave(save, this.state.save)) {
      this.state = { ...this.state, unsavedCells, conflicts, save };
      if (doc === this.state.doc) {
        this.emitChange();
        return;
      }
    }
    this.setDoc(doc, opts);
  }

  private computeSave(connection: ConnectionState): SaveStatus {
    return saveStatus({
      connection: connection.status,
      unsaved: Object.keys(this.connection.pendingEdits).length + this.connection.outboxCommands.length,
      conflicts: Object.keys(this.connection.conflicts).length,
      lastError: this.connection.saveError,
    });
  }

  private async lab<Op extends LabOp>(command: LabSend<Op>, what: string): Promise<boolean> {
    const ack = await this.connection.sendLab(command);
    if (!ack.ok) this.notify(`${what} failed: ${ack.error}`);
    return ack.ok;
  }

  /** Sends a control command; a refusal becomes a notice. Resolves with the answer (null: not allowed here, nothing sent). */
  private control(command: ControlCommand): Promise<NotebookAnswer<ControlCommand["op"]> | null> {
    if (!this.allowed(needOf(command.op))) return Promise.resolve(null);
    return this.connection.sendControl(command).then((ack) => {
      if (!ack.ok) this.notify(`${describe(command)} failed: ${ack.error}`);
      return ack;
    });
  }

  private setFormError(cellId: string, error: string | null): void {
    if ((this.state.formErrors[cellId] ?? null) === error) return;
    const formErrors = { ...this.state.formErrors };
    if (error === null) delete formErrors[cellId];
    else formErrors[cellId] = error;
    this.update({ formErrors });
  }

  private selectedIndex(): number {
    const id = this.state.ui.selectedId;
    return id === null ? -1 : (this.state.doc?.cells.findIndex((c) => c.id === id) ?? -1);
  }

  private setDoc(doc: NotebookDocument, opts: { batched?: boolean } = {}): void {
    const previous = this.state.doc;
    if (doc === previous) return;
    const ui = keepSelection(this.state.ui, previous?.cells ?? [], doc.cells);
    this.state = { ...this.state, doc, ui };
    if (opts.batched === true) this.scheduleNotify();
    else this.emitChange();
  }

  private notify(message: string): void {
    this.noticeSeq += 1;
    const notices = [...this.state.notices, { id: this.noticeSeq, message }].slice(-MAX_NOTICES);
    this.update({ notices });
  }

  private update(patch: Partial<NotebookViewState>): void {
    this.state = { ...this.state, ...patch };
    this.emitChange();
  }

  private scheduleNotify(): void {
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    this.schedule(() => {
      this.notifyScheduled = false;
      this.emitChange();
    });
  }

  private emitChange(): void {
    for (const listener of this.listeners) listener();
  }
}

function sameSave(a: SaveStatus, b: SaveStatus): boolean {
  return a.state === b.state && saveStatusText(a) === saveStatusText(b);
}

/** After the cell list changed, keep the selection on an existing cell, near where it was. */
function keepSelection(ui: CommandModeState, before: readonly Cell[], after: readonly Cell[]): CommandModeState {
  if (ui.selectedId !== null && after.some((c) => c.id === ui.selectedId)) return ui;
  if (after.length === 0) return ui.selectedId === null ? ui : { ...ui, selectedId: null, mode: "command" };
  const oldIndex = ui.selectedId === null ? 0 : Math.max(0, before.findIndex((c) => c.id === ui.selectedId));
  const next = after[Math.min(oldIndex, after.length - 1)] as Cell;
  return { ...ui, selectedId: next.id, mode: "command" };
}

/** What an intent needs: the need of the op it sends; null: it sends none. */
function actionNeed(action: CommandAction): AccessNeed | null {
  switch (action.type) {
    case "open":
      return null;
    case "undo-delete":
      return needOf("insert-cell");
    case "run":
      return needOf("execute");
    case "interrupt":
    case "restart":
    case "insert-cell":
    case "delete-cell":
    case "set-kind":
      return needOf(action.type);
  }
}

function describe(command: ControlCommand): string {
  switch (command.op) {
    case "execute":
      return command.cellIds.length === 1 ? "Running the cell" : `Running ${command.cellIds.length} cells`;
    case "interrupt":
      return "Interrupt";
    case "restart":
      return "Restart";
    case "shutdown":
      return "Shutdown";
    case "set-parameters":
      return "Changing the parameters";
    case "detach-template":
      return "Detaching the cell";
    case "reattach-template":
      return "Reattaching the cell";
    case "undo-reattach":
      return "Undoing the reattach";
    case "commit-prediction":
      return "Committing the prediction";
    case "set-kernel-spec":
      return "Changing the kernel's host";
  }
}

function now(): number {
  return typeof performance !== "undefined" ? performance.now() : Date.now();
}
