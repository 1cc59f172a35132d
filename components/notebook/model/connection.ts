/**
 * The browser's end of the notebook socket: it (re)opens the notebook on
 * every connect (resuming from the journal's position, so the server answers
 * with just the missed events instead of a snapshot) and never loses typed
 * code. The jobs it drives live beside it:
 * - socket-link.ts: the socket, its reconnects and the connection state union;
 * - event-journal.ts: events applied strictly in journal order (a duplicate
 *   skipped, a gap re-opens);
 * - source-saver.ts (with draft-keeper.ts): typed text, debounced, kept until
 *   acknowledged, its conflicts, and the browser draft;
 * - structural-outbox.ts: structural commands applied optimistically by the
 *   caller, kept until acknowledged, replayed onto the next snapshot;
 * - socket-rpc.ts: one request and its answer. Control commands (execute,
 *   interrupt, restart…) are sent only while connected (a run is never queued
 *   blind behind an outage); notebook-list commands go over the same socket.
 */
import type { ErrorCode } from "../../../server/core/errors";
import type { NotebookAccessLevel } from "../../../server/core/protocol/accounts-model";
import type { NotebookDocument, CellKind } from "../../../server/core/protocol/notebook-model";
import type { NotebookCommand, NotebookEvent } from "../../../server/core/protocol/socket-api";
import type { LabAnswer, LabOp, LabSend } from "../../../server/core/protocol/ops-lab";
import type { NotebookAnswer, NotebookOp, NotebookReply, NotebookSend } from "../../../server/core/protocol/ops-notebook";
import { EventJournal } from "./event-journal";
import type { DraftStore } from "./draft-keeper";
import type { PendingEdits, StructuralCommand } from "./pending-edits";
import { SocketLink, type ConnectionState } from "./socket-link";
import { answerOf, isLost, NOT_CONNECTED, requestLab, requestNotebook, type NotebookSocket, type Reply } from "../../shell/model/socket-rpc";
import { SourceSaver, type CellConflicts, type ConflictChoice } from "./source-saver";
import { StructuralOutbox } from "./structural-outbox";

export type { DraftStore } from "./draft-keeper";
export { classifyDisconnect, type ConnectionState, type DisconnectPolicy } from "./socket-link";
export type { NotebookSocket } from "../../shell/model/socket-rpc";
export type { CellConflict, CellConflicts, ConflictChoice } from "./source-saver";

/** Whether a refused `open` can be retried, from the refusal's code: only a notebook that does not exist cannot. */
export function classifyOpenError(code: ErrorCode): "not-found" | "retry" {
  return code === "not-found" ? "not-found" : "retry";
}

/** Commands that need the server's answer now (never queued offline). */
export type ControlCommand = Extract<
  NotebookCommand,
  { op: "execute" | "interrupt" | "restart" | "shutdown" | "set-kernel-spec" | "set-parameters" | "detach-template" | "reattach-template" | "undo-reattach" | "commit-prediction" }
>;

/** Questions for the kernel from the editor (Tab, Shift+Tab). */
export type AssistOp = "complete" | "inspect";
/** The server answers within its own kernel timeout (3 s); this covers the round trip. */
const ASK_TIMEOUT_MS = 4_000;
const RETRY_MS = 3_000;

export interface ConnectionListener {
  state(state: ConnectionState): void;
  /**
   * The server's document after (re)opening. The outbox has just been re-sent;
   * pending sources are sent right after this returns, so structural commands
   * the listener sends from here (re-inserting lost cells) go first.
   */
  snapshot(serverDoc: NotebookDocument): void;
  /** What this viewer may do with the notebook, as the server said on (re)opening (before the snapshot). */
  access(level: NotebookAccessLevel): void;
  event(event: NotebookEvent): void;
  /**
   * The server refused an edit of this cell: its text is now `theirSource`
   * (newer than any event received before this call). The edit stays pending
   * until `resolveConflict`.
   */
  conflict(cellId: string, theirSource: string): void;
  /** The outbox or the pending edits changed without a call from the listener (an ack arrived). */
  changed(): void;
  /** A command was refused or could not be delivered; shown to the user once. */
  error(message: string): void;
}

export interface ConnectionOptions {
  createSocket?: () => NotebookSocket;
  drafts?: DraftStore | null;
  sourceDebounceMs?: number;
  ackTimeoutMs?: number;
}

export class NotebookConnection {
  private readonly link: SocketLink;
  /** Increments on each connect; acks and events are tied to their session. */
  private session = 0;
  private synced = false;
  private everConnected = false;
  private visible = true;
  private readonly ackTimeoutMs: number;
  private readonly journal: EventJournal;
  private readonly sources: SourceSaver;
  private readonly outbox: StructuralOutbox;

  constructor(
    readonly notebookId: string,
    private readonly listener: ConnectionListener,
    options: ConnectionOptions = {},
  ) {
    this.ackTimeoutMs = options.ackTimeoutMs ?? 15_000;
    this.link = new SocketLink(
      {
        connected: (socket) => this.open(socket),
        down: () => {
          this.synced = false;
          this.sources.writeDraftNow();
        },
        state: (state) => listener.state(state),
        listen: (socket) => {
          socket.on("notebook:events", (notebookId, firstSeq, events) => {
            if (notebookId === this.notebookId) this.journal.receive(firstSeq, events, this.synced);
          });
          socket.on("lab:resync", (notebookId) => {
            if (notebookId === null || notebookId === this.notebookId) this.resync();
          });
        },
      },
      options.createSocket,
    );
    this.journal = new EventJournal(
      (event) => listener.event(event),
      () => this.resync(),
    );
    const common = { session: () => this.session, changed: () => listener.changed() };
    this.sources = new SourceSaver(
      { ...common, notebookId, synced: () => this.synced, send: (command) => this.emit(command), conflict: (c, theirs) => listener.conflict(c, theirs), error: (m) => listener.error(m) },
      { drafts: options.drafts, debounceMs: options.sourceDebounceMs, saveWaitMs: this.ackTimeoutMs },
    );
    this.outbox = new StructuralOutbox({
      ...common,
      send: (command) => this.emit(command),
      refused: (message, sameSession) => {
        listener.error(message);
        if (sameSession) this.resync();
      },
    });
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  get pendingEdits(): PendingEdits {
    return this.sources.pendingEdits;
  }

  get conflicts(): CellConflicts {
    return this.sources.conflicts;
  }

  get saveError(): string | null {
    return this.sources.saveError;
  }

  /** Structural commands not yet acknowledged, in the order they were made. */
  get outboxCommands(): StructuralCommand[] {
    return this.outbox.commands;
  }

  start(): void {
    this.link.start();
  }

  stop(): void {
    this.sources.stop();
    this.link.end();
  }

  /** The browser says the network is gone / back (window offline/online events). */
  setBrowserOnline(online: boolean): void {
    this.link.setBrowserOnline(online);
  }

  /**
   * Record a local edit; it is sent after a pause in typing and kept until
   * acknowledged. `base` is sourceHash() of the server text it was typed on
   * (used only when nothing of this cell was pending).
   */
  editSource(cellId: string, source: string, kind: CellKind, index: number, base: string): void {
    this.sources.edit(cellId, source, kind, index, base);
  }

  /** Send every unsent source edit now (before a run, on page hide). */
  flushSources(): void {
    this.sources.flush();
  }

  /** The user's answer to a conflict: forget the local edit, or overwrite the other tab's text. */
  resolveConflict(cellId: string, choice: ConflictChoice): void {
    this.sources.resolveConflict(cellId, choice);
  }

  /** A structural change the caller already applied locally. */
  sendStructural(command: StructuralCommand): void {
    if (command.op === "delete-cell") this.sources.cellDeleted(command.cellId);
    this.outbox.add(command, this.synced);
  }

  /** Persist (or clear) the draft right away: called on page hide and disconnect. */
  writeDraftNow(): void {
    this.sources.writeDraftNow();
  }

  /**
   * Execute / interrupt / restart: only while connected; resolves with the
   * server's answer. A run is sent once the edits of its cells are saved: the
   * server runs what it stores.
   */
  async sendControl(command: ControlCommand): Promise<NotebookAnswer<ControlCommand["op"]>> {
    if (!this.synced) return { ok: false, error: NOT_CONNECTED, code: "unavailable" };
    if (command.op === "execute") {
      this.sources.flush();
      const unsaved = await this.sources.whenSaved(command.cellIds);
      if (unsaved !== null) return unsaved;
    }
    return answerOf(await this.emit(command));
  }

  /** A notebook-list command (rename, restore…) over this page's socket; resolves with the op's own answer. */
  sendLab<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return requestLab(this.link.socket, command, this.ackTimeoutMs);
  }

  /**
   * Completion and inspection: answered now or not at all (within
   * `timeoutMs`; the editor then falls back to words of the cell), never
   * queued for a reconnect.
   */
  async ask<Op extends AssistOp>(command: NotebookSend<Op>, timeoutMs = ASK_TIMEOUT_MS): Promise<NotebookAnswer<Op>> {
    if (!this.synced) return { ok: false, error: NOT_CONNECTED, code: "unavailable" };
    return answerOf(await this.emit(command, timeoutMs));
  }

  /**
   * Whether this tab is visible (Page Visibility): the server counts only
   * visible tabs as viewing, so a forgotten background tab does not keep a
   * kernel (and its GPUs) from idle shutdown. Re-sent on every (re)open.
   */
  setVisible(visible: boolean): void {
    if (this.visible === visible) return;
    this.visible = visible;
    if (this.synced) void this.emit({ op: "presence", notebookId: this.notebookId, visible });
  }

  /** The socket (re)connected, or the notebook must be opened again on it: open, resuming where the journal stands. */
  private open(socket: NotebookSocket): void {
    this.session += 1;
    this.synced = false;
    this.journal.dropHeld();
    this.sources.newSession();
    const session = this.session;
    if (this.link.state.status === "offline" || !this.everConnected) {
      this.link.setState(this.everConnected ? { status: "reconnecting", attempt: 0, lastError: null } : { status: "connecting" });
    }
    const resume = this.journal.position;
    const open: NotebookSend<"open"> = resume === null ? { op: "open", notebookId: this.notebookId } : { op: "open", notebookId: this.notebookId, resume };
    const askAgain = (): void => {
      setTimeout(() => {
        if (session === this.session && this.link.socket === socket && socket.connected) this.open(socket);
      }, RETRY_MS);
    };
    void this.emit(open).then((ack) => {
      if (session !== this.session || this.link.socket !== socket) return;
      // No answer: ask again while the socket is up (a reconnect asks by itself).
      if (isLost(ack)) return askAgain();
      const resumable = ack.ok && ack.missed !== undefined && this.journal.position !== null;
      if (!ack.ok && classifyOpenError(ack.code) === "not-found") {
        // Nothing to reconnect to: stop here (typed drafts stay in the browser).
        this.link.end({ status: "not-found", reason: ack.error });
        return;
      }
      if (!ack.ok && ack.code === "unavailable") {
        // A part of the lab is away for now (the server that drove this notebook died, and another takes it over after its lease): ask again.
        this.link.setState({ status: "reconnecting", attempt: 0, lastError: ack.error });
        return askAgain();
      }
      if (!ack.ok || (ack.notebook === undefined && !resumable)) {
        // The reply's schema lets either be absent (one or the other comes): neither is no way to show the notebook.
        const error = ack.ok ? "the server sent neither a notebook nor the missed events" : ack.error;
        this.link.setState({ status: "offline", reason: `could not open the notebook: ${error}` });
        this.listener.error(`Could not open notebook: ${error}`);
        return;
      }
      this.onOpened(ack, socket.id ?? "");
    });
  }

  private onOpened(ack: NotebookReply<"open">, socketId: string): void {
    this.synced = true;
    this.everConnected = true;
    this.link.setState({ status: "connected", socketId });
    this.listener.access(ack.access);
    if (!this.visible) void this.emit({ op: "presence", notebookId: this.notebookId, visible: false });
    this.outbox.sendAll();
    if (ack.notebook !== undefined) {
      this.journal.position = ack.journal;
      this.listener.snapshot(ack.notebook);
    } else {
      for (const missed of ack.missed ?? []) this.journal.take(missed.seq, missed.event);
      if (this.journal.position !== null && ack.journal.seq !== this.journal.position.seq) {
        // The missed events did not reach where the server says they end: start over.
        this.journal.position = null;
        this.resync();
        return;
      }
    }
    this.journal.releaseHeld();
    this.sources.flush();
  }

  /** Ask for a fresh snapshot on the current socket. */
  private resync(): void {
    const socket = this.link.socket;
    if (socket?.connected === true) this.open(socket);
  }

  /** Sends `command`; resolves with its op's own answer (checked against the op's reply schema), or that none came. */
  private emit<Op extends NotebookOp>(command: NotebookSend<Op>, timeoutMs = this.ackTimeoutMs): Promise<Reply<Op>> {
    return requestNotebook(this.link.socket, command, timeoutMs);
  }
}
