/**
 * One open notebook in the browser: the facade components call. It wires the
 * pieces that each do one job around one view store (view-store.ts, read by
 * React through `subscribe`/`getState`; no behaviour lives in React hooks):
 * - the connection (connection.ts): the socket, the journal, drafts, the outbox;
 * - the document view (notebook-document-view.ts): the server's document with our unsaved changes on top;
 * - the sender (notebook-sender.ts): the one way an op is gated by access, sent and its refusal reported;
 * - the keyboard and selection (notebook-keys.ts), the cell edits (notebook-edits.ts), running the
 *   kernel (notebook-runs.ts), the guided-scenario intents (guided-cells.ts), the live metric feeds
 *   (cell-metric-feeds.ts).
 * What is left here is the wiring, the notices, and the notebook's own lab ops (rename, restore, share).
 */
import type { CellKind, ParameterValue } from "../../../server/core/protocol/notebook-model";
import type { LabAnswer, LabOp, LabSend } from "../../../server/core/protocol/ops-lab";
import { CellMetricFeeds, type CellMetricFeed } from "./cell-metric-feeds";
import type { CommandModeState, KeyInput } from "./command-mode";
import { NotebookConnection, type CellConflicts, type ConflictChoice, type ConnectionOptions } from "./connection";
import { GuidedCells } from "./guided-cells";
import { newCellId } from "../../shell/model/ids";
import type { KernelAssist } from "./kernel-assist";
import { needOf } from "./notebook-access";
import { DocumentView } from "./notebook-document-view";
import { NotebookEdits } from "./notebook-edits";
import { NotebookKeys } from "./notebook-keys";
import { NotebookRuns } from "./notebook-runs";
import { NotebookSender, quietly, type ControlAnswer } from "./notebook-sender";
import { initialViewState, withNotice, type NotebookViewState, type OpenPanel } from "./notebook-view-state";
import type { ShortcutCommand } from "./shortcuts";
import { ViewStore, type Schedule } from "../../shell/model/view-store";

export interface ControllerOptions {
  connection?: ConnectionOptions;
  /** How batched notifications are scheduled (default: next animation frame). */
  schedule?: Schedule;
  /** Asks before a restart throws away a live kernel's state (default: yes without asking). */
  confirm?: (question: string) => boolean;
  /** How long the Undo of a reattach is offered (ms). */
  undoMs?: number;
}

export { RESTART_QUESTION, restartLosesState } from "./notebook-runs";

export class NotebookController {
  private readonly store: ViewStore<NotebookViewState>;
  private readonly connection: NotebookConnection;
  private readonly view: DocumentView;
  private readonly sender: NotebookSender;
  private readonly keys: NotebookKeys;
  private readonly edits: NotebookEdits;
  private readonly guided: GuidedCells;
  private readonly feeds = new CellMetricFeeds();
  private readonly runs: NotebookRuns;
  private noticeSeq = 0;
  private snapshots = 0;

  readonly subscribe: ViewStore<NotebookViewState>["subscribe"];
  readonly getState: ViewStore<NotebookViewState>["getState"];
  /** The kernel's completions and inspection for the editors (Tab, Shift+Tab). */
  readonly kernelAssist: KernelAssist;

  constructor(
    readonly notebookId: string,
    options: ControllerOptions = {},
  ) {
    this.connection = new NotebookConnection(
      notebookId,
      {
        state: (connection) => this.store.update({ connection, save: this.view.save(connection) }),
        access: (access) => {
          if (access !== this.store.getState().access) this.store.update({ access });
          // Asked again on a reopen until known: the badge names who shared it.
          if (access !== "edit" && this.store.getState().owner === null) void this.loadOwner();
        },
        snapshot: (doc) => {
          this.view.snapshot(doc);
          // The first snapshot is the page opening; later ones replace a journal we could not resume.
          if (this.snapshots++ > 0) this.feeds.resynced();
        },
        event: (event) => {
          if (!this.feeds.deliver(event)) this.view.event(event);
        },
        conflict: (cellId, theirSource) => this.view.conflict(cellId, theirSource),
        changed: () => this.view.recompute(),
        error: (message) => this.notify(message),
      },
      options.connection,
    );
    this.store = new ViewStore(initialViewState(this.connection.state, Object.keys(this.connection.pendingEdits).length), options.schedule);
    this.view = new DocumentView(this.store, this.connection);
    this.store.replace({ save: this.view.save(this.connection.state) });
    this.subscribe = this.store.subscribe;
    this.getState = this.store.getState;
    this.sender = new NotebookSender(this.connection, {
      access: () => this.store.getState().access,
      showing: () => this.store.getState().doc !== null,
      notify: (message) => this.notify(message),
    });
    this.kernelAssist = this.sender.kernelAssist(notebookId);
    const selectCell = (cellId: string): void => this.selectCell(cellId);
    this.edits = new NotebookEdits({ notebookId, store: this.store, view: this.view, transport: this.connection, sender: this.sender, notify: (m) => this.notify(m), selectCell });
    this.guided = new GuidedCells(notebookId, this.store, this.sender, options.undoMs ?? 10_000);
    const conflicts = (): CellConflicts => this.connection.conflicts;
    this.runs = new NotebookRuns({ notebookId, store: this.store, sender: this.sender, conflicts, notify: (m) => this.notify(m), confirm: options.confirm ?? (() => true) });
    this.keys = new NotebookKeys(this.store, this.sender, {
      runCells: (cellIds) => this.runCells(cellIds),
      insertCell: (index, kind, cellId) => this.insertCell(index, kind, cellId),
      deleteCell: (cellId) => this.edits.deleteCell(cellId),
      undoDelete: () => this.edits.undoDelete(),
      setKind: (cellId, kind) => this.edits.setKind(cellId, kind),
      interrupt: () => this.runs.interrupt(),
      requestRestart: () => this.runs.requestRestart(),
    });
  }

  // ---- the page's life -----------------------------------------------------------

  start(): void {
    this.connection.start();
  }

  stop(): void {
    this.guided.dismissUndo();
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
    this.store.update({ notices: this.store.getState().notices.filter((n) => n.id !== id) });
  }

  // ---- keyboard and selection (notebook-keys.ts) --------------------------------------

  handleKey(input: KeyInput): boolean {
    return this.keys.handleKey(input);
  }

  runCommand(command: ShortcutCommand): void {
    this.keys.runCommand(command);
  }

  setPanel(panel: OpenPanel | null): void {
    this.keys.setPanel(panel);
  }

  toggleToc(): void {
    this.keys.toggleToc();
  }

  selectCell(cellId: string, mode: CommandModeState["mode"] = "command"): void {
    this.keys.selectCell(cellId, mode);
  }

  editorFocused(cellId: string): void {
    this.keys.selectCell(cellId, "edit");
  }

  editorBlurred(cellId: string): void {
    this.keys.editorBlurred(cellId);
  }

  // ---- cell edits (notebook-edits.ts) -------------------------------------------------

  editSource(cellId: string, source: string): void {
    this.edits.editSource(cellId, source);
  }

  /** Find and replace: each cell saved like typing; Undo is offered until the next replace. */
  replaceSources(sources: Readonly<Record<string, string>>, message: string): void {
    this.edits.replaceSources(sources, message);
  }

  undoReplace(): void {
    this.edits.undoReplace();
  }

  dismissReplaceUndo(): void {
    this.edits.dismissReplaceUndo();
  }

  /** The user's answer to "this cell was changed in another tab". */
  resolveConflict(cellId: string, choice: ConflictChoice): void {
    this.connection.resolveConflict(cellId, choice);
  }

  insertCell(index: number, kind: CellKind = "code", cellId: string = newCellId()): string {
    this.edits.insertCell(index, kind, cellId);
    return cellId;
  }

  /** Toolbar "+": a code cell below the selected one, selected. */
  insertBelowSelected(): void {
    if (!this.sender.allowed(needOf("insert-cell"))) return;
    const index = this.keys.selectedIndex();
    this.selectCell(this.insertCell(index === -1 ? (this.store.getState().doc?.cells.length ?? 0) : index + 1));
  }

  deleteSelected(): void {
    if (this.store.getState().ui.selectedId !== null) this.keys.pressInCommandMode(["d", "d"]);
  }

  /** Z: the newest deleted cell back where it was. */
  undoDelete(): void {
    this.edits.undoDelete();
  }

  moveSelected(delta: -1 | 1): void {
    this.edits.moveCell(this.keys.selectedIndex(), delta);
  }

  setKind(cellId: string, kind: CellKind): void {
    this.edits.setKind(cellId, kind);
  }

  clearOutputs(cellIds: readonly string[]): void {
    this.edits.clearOutputs(cellIds);
  }

  clearAllOutputs(): void {
    this.edits.clearOutputs((this.store.getState().doc?.cells ?? []).filter((c) => c.outputs.length > 0).map((c) => c.id));
  }

  // ---- guided scenarios (guided-cells.ts) ---------------------------------------------

  setParameters(cellId: string, values: Record<string, ParameterValue>): void {
    this.guided.setParameters(cellId, values);
  }

  detachTemplate(cellId: string): void {
    this.guided.detachTemplate(cellId);
  }

  reattachTemplate(cellId: string): void {
    this.guided.reattachTemplate(cellId);
  }

  undoReattach(): void {
    this.guided.undoReattach();
  }

  dismissUndo(): void {
    this.guided.dismissUndo();
  }

  commitPrediction(questionId: string, choice: string): void {
    void this.guided.commitPrediction(questionId, choice);
  }

  /** `commitPrediction`, resolving with the server's answer (null when this viewer may not commit). */
  commitPredictionAnswered(questionId: string, choice: string): Promise<ControlAnswer | null> {
    return this.guided.commitPrediction(questionId, choice);
  }

  /** Live metric points of one cell, for its charts; the same object per cell. */
  metricFeed(cellId: string): CellMetricFeed {
    return this.feeds.feed(cellId);
  }

  // ---- running the kernel (notebook-runs.ts) ---------------------------------------------

  /** Toolbar ▶: run the selected cell and advance (Shift+Enter). */
  runSelectedAndAdvance(): void {
    this.keys.press({ key: "Enter", shift: true });
  }

  runAll(): void {
    void this.runs.runAll();
  }

  /** The cells the page does not show; Run all runs the others. */
  setUnshownCells(cellIds: ReadonlySet<string>): void {
    this.runs.setUnshownCells(cellIds);
  }

  runCells(cellIds: readonly string[]): void {
    void this.runs.run(cellIds);
  }

  /** `runCells`, resolving with the server's answer (null: nothing sent); what the chaos run's participants wait on. */
  runCellsAnswered(cellIds: readonly string[]): Promise<ControlAnswer | null> {
    return this.runs.run(cellIds);
  }

  interrupt(): void {
    this.runs.interrupt();
  }

  restart(): void {
    this.runs.restart();
  }

  requestRestart(): void {
    this.runs.requestRestart();
  }

  setKernelSpec(hostId: string, gpus: number): Promise<string | null> {
    return this.runs.setKernelSpec(hostId, gpus);
  }

  loadHosts(): Promise<void> {
    return this.runs.loadHosts();
  }

  // ---- the notebook itself ---------------------------------------------------------

  /** Rename; every viewer (this one included) gets the new title from the server's event. */
  async rename(title: string): Promise<boolean> {
    const trimmed = title.trim();
    if (trimmed === "" || trimmed === this.store.getState().doc?.title) return trimmed !== "";
    return (await this.sender.sendLab({ op: "rename-notebook", notebookId: this.notebookId, title: trimmed }, { what: "Renaming" })).ok;
  }

  /** Undo a deletion (from the banner shown while the notebook is deleted). */
  async restore(): Promise<boolean> {
    return (await this.sender.sendLab({ op: "restore-notebook", notebookId: this.notebookId }, { what: "Restoring" })).ok;
  }

  /** A notebook-list command over this page's socket (the Share panel's, which shows the answer itself). */
  labCommand<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sender.sendLab(command, quietly);
  }

  /** The owner's name of a notebook shared with this viewer, from the notebook list (the open answer carries only the access). */
  private async loadOwner(): Promise<void> {
    const answer = await this.sender.sendLab({ op: "list-notebooks" }, quietly);
    const item = answer.ok ? answer.notebooks.find((n) => n.id === this.notebookId) : undefined;
    if (item !== undefined && item.access !== "edit") this.store.update({ owner: item.owner.name });
  }

  private notify(message: string): void {
    this.noticeSeq += 1;
    this.store.update({ notices: withNotice(this.store.getState().notices, this.noticeSeq, message) });
  }
}
