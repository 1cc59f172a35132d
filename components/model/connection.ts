/**
 * The browser's end of the notebook socket: a typed wrapper over
 * socket.io-client that (re)opens the notebook on every connect, keeps the
 * connection state as a union, and never loses typed code (see
 * pending-edits.ts for the pure bookkeeping it drives).
 *
 * Events carry a per-notebook sequence number. The connection applies them
 * strictly in order: a duplicate (already in the snapshot) is skipped, a gap
 * triggers a re-open, and a re-open after a reconnect sends `resume` with the
 * last applied position so the server can answer with just the missed events
 * instead of a whole snapshot.
 *
 * Commands fall in three groups:
 * - source edits: debounced, coalesced per cell, kept until acknowledged;
 *   at most one `set-source` per cell is in flight, each carrying the base
 *   it was typed on; one the server refuses as a conflict waits for the
 *   user's choice (`resolveConflict`) and is not sent again until then;
 *   a "conflict" with a text this page sent itself but never heard back
 *   about (the write landed, its answer was lost) is its own write: the
 *   newer text is re-based on it and sent again;
 * - structural commands: applied optimistically by the caller, kept in an
 *   outbox until acknowledged, replayed onto the next snapshot;
 * - control commands (execute, interrupt, restart): sent only while
 *   connected, answered with the server's ack (a run is never queued blind
 *   behind an outage).
 *
 * Notebook-list commands (rename, restore) go over the same socket.
 */
import { io, type Socket } from "socket.io-client";
import type { ErrorCode } from "../../server/core/errors";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import type { NotebookDocument, CellKind } from "../../server/core/protocol/notebook-model";
import type {
  ClientToServerEvents,
  JournalPosition,
  NotebookCommand,
  NotebookEvent,
  SequencedEvent,
  ServerToClientEvents,
} from "../../server/core/protocol/socket-api";
import { messageTooLarge } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import { notebookAnswerOf, type NotebookAnswer, type NotebookOp, type NotebookReply, type NotebookSend } from "../../server/core/protocol/ops-notebook";
import {
  acknowledgeEdit,
  classifySourceReply,
  draftKey,
  forgetCell,
  keepMine,
  maxRev,
  mergeDraft,
  parseDraft,
  rebaseOnOwnWrite,
  recordEdit,
  serializeDraft,
  setSourceCommand,
  type PendingEdits,
  type StructuralCommand,
} from "./pending-edits";
import { sessionEndWords, watchSession, type SessionEnd } from "./session-ended";

export type ConnectionState =
  | { status: "connecting" }
  | { status: "connected"; socketId: string }
  | { status: "reconnecting"; attempt: number; lastError: string | null }
  | { status: "offline"; reason: string }
  /** The server has no such notebook: nothing to retry. */
  | { status: "not-found"; reason: string }
  /** The session ended (signed out, expired, removed): nothing to retry until the user signs in again. */
  | { status: "signed-out"; reason: string };

/** A cell whose edit the server refused: another tab changed it first. */
export interface CellConflict {
  /** The cell's text on the server when our edit was refused. */
  theirSource: string;
}

export type CellConflicts = Readonly<Record<string, CellConflict>>;

export type ConflictChoice = "use-theirs" | "keep-mine";

/** Whether a refused `open` can be retried, from the refusal's code: only a notebook that does not exist cannot. */
export function classifyOpenError(code: ErrorCode): "not-found" | "retry" {
  return code === "not-found" ? "not-found" : "retry";
}

/** Commands that need the server's answer now (never queued offline). */
export type ControlCommand = Extract<
  NotebookCommand,
  { op: "execute" | "interrupt" | "restart" | "shutdown" | "set-kernel-spec" | "set-parameters" | "detach-template" | "reattach-template" | "undo-reattach" | "commit-prediction" }
>;

type ControlOp = ControlCommand["op"];

/** Questions for the kernel from the editor (Tab, Shift+Tab). */
export type AssistOp = "complete" | "inspect";
/** The server answers within its own kernel timeout (3 s); this covers the round trip. */
const ASK_TIMEOUT_MS = 4_000;

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

/** The part of `localStorage` used for drafts. */
export interface DraftStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export type NotebookSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export interface ConnectionOptions {
  createSocket?: () => NotebookSocket;
  drafts?: DraftStore | null;
  sourceDebounceMs?: number;
  ackTimeoutMs?: number;
}

/** What a socket.io disconnect reason means for us. */
export type DisconnectPolicy = "auto-reconnect" | "reconnect-ourselves" | "closed";

export function classifyDisconnect(reason: string): DisconnectPolicy {
  switch (reason) {
    case "io client disconnect":
      return "closed";
    // The server closed the socket on purpose (e.g. it restarted): socket.io
    // does not reconnect by itself after this one.
    case "io server disconnect":
      return "reconnect-ourselves";
    default:
      // "transport close", "transport error", "ping timeout", "parse error"
      return "auto-reconnect";
  }
}

/** No answer came (not connected, timed out, link dropped). */
type Lost = { ok: false; error: string; code: "unavailable"; lost: true };
/** A command's answer, or the fact that none came. */
type Reply<Op extends NotebookOp> = NotebookAnswer<Op> | Lost;

/** A failure this end reports itself, in the shape of the server's. */
type Failure = { ok: false; error: string; code: ErrorCode };

const isLost = <Op extends NotebookOp>(reply: Reply<Op>): reply is Lost => "lost" in reply;

interface OutboxEntry {
  command: StructuralCommand;
  /** Session it was last sent in; 0 = not sent yet. */
  sentIn: number;
}

export class NotebookConnection {
  private socket: NotebookSocket | null = null;
  private current: ConnectionState = { status: "connecting" };
  private pending: PendingEdits;
  /** Cells this page has edited, saved or deleted: its view of them goes into the shared draft. */
  private readonly touched = new Set<string>();
  /** Source revisions never repeat, even after every edit was acknowledged. */
  private lastRev: number;
  /** Cells whose `set-source` awaits its answer in the current session. */
  private readonly inFlight = new Set<string>();
  /**
   * Per cell, the texts this page sent whose answer it never got (lost,
   * timed out, refused by a server that may have stored it anyway), until
   * one send of the cell is answered "saved". The server holding one of
   * them is our own write that landed, not another tab's.
   */
  private readonly unconfirmed = new Map<string, string[]>();
  private conflictsByCell: CellConflicts = {};
  /** Why the last save was refused, until one succeeds. */
  private lastSaveError: Omit<Failure, "ok"> | null = null;
  /** Runs waiting for their cells' edits to be saved; each re-checks when the edits' state changes. */
  private readonly saveWaiters = new Set<() => void>();
  private outbox: OutboxEntry[] = [];
  /** Increments on each connect; acks and events are tied to their session. */
  private session = 0;
  private synced = false;
  /** Where the client's copy of the server document stands in the server's event journal. */
  private journal: JournalPosition | null = null;
  /** Events that arrived while an `open` was waiting for its answer. */
  private early: SequencedEvent[] = [];
  private everConnected = false;
  private sourceTimer: ReturnType<typeof setTimeout> | null = null;
  private draftTimer: ReturnType<typeof setTimeout> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly debounceMs: number;
  private readonly ackTimeoutMs: number;

  constructor(
    readonly notebookId: string,
    private readonly listener: ConnectionListener,
    private readonly options: ConnectionOptions = {},
  ) {
    this.debounceMs = options.sourceDebounceMs ?? 300;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 15_000;
    this.pending = parseDraft(notebookId, options.drafts?.getItem(draftKey(notebookId)) ?? null);
    for (const cellId of Object.keys(this.pending)) this.touched.add(cellId);
    this.lastRev = maxRev(this.pending);
  }

  get state(): ConnectionState {
    return this.current;
  }

  get pendingEdits(): PendingEdits {
    return this.pending;
  }

  get conflicts(): CellConflicts {
    return this.conflictsByCell;
  }

  get saveError(): string | null {
    return this.lastSaveError?.error ?? null;
  }

  /** Structural commands not yet acknowledged, in the order they were made. */
  get outboxCommands(): StructuralCommand[] {
    return this.outbox.map((e) => e.command);
  }

  start(): void {
    if (this.socket !== null) return;
    const socket =
      this.options.createSocket?.() ??
      io({
        // WebSocket only, as the server allows: behind a load balancer each connection stays on one lab server.
        transports: ["websocket"],
        autoConnect: false,
        reconnection: true,
        reconnectionDelay: 500,
        reconnectionDelayMax: 5_000,
        randomizationFactor: 0.5,
        timeout: 10_000,
      });
    this.socket = socket;
    socket.on("connect", () => this.onConnect());
    socket.on("disconnect", (reason) => this.onDisconnect(reason));
    socket.on("connect_error", (err) => this.onConnectError(err));
    socket.io.on("reconnect_attempt", this.onReconnectAttempt);
    watchSession(socket, (reason) => this.onSessionEnded(reason));
    socket.on("notebook:events", (notebookId, firstSeq, events) => {
      if (notebookId !== this.notebookId) return;
      events.forEach((event, index) => {
        if (this.synced) this.applySequenced(firstSeq + index, event);
        else this.early.push({ seq: firstSeq + index, event });
      });
    });
    socket.on("lab:resync", (notebookId) => {
      if (notebookId === null || notebookId === this.notebookId) this.resync();
    });
    socket.connect();
  }

  stop(): void {
    this.flushSources();
    this.writeDraftNow();
    if (this.sourceTimer !== null) clearTimeout(this.sourceTimer);
    if (this.draftTimer !== null) clearTimeout(this.draftTimer);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.closeSocket();
  }

  private closeSocket(): void {
    this.socket?.removeAllListeners();
    this.socket?.io.off("reconnect_attempt", this.onReconnectAttempt);
    this.socket?.disconnect();
    this.socket = null;
    this.synced = false;
  }

  /** The browser says the network is gone / back (window offline/online events). */
  setBrowserOnline(online: boolean): void {
    if (this.current.status === "not-found" || this.current.status === "signed-out") return;
    if (!online) {
      this.setState({ status: "offline", reason: "this browser is offline" });
    } else if (this.current.status === "offline" && this.socket !== null) {
      this.setState({ status: "reconnecting", attempt: 0, lastError: null });
      if (!this.socket.connected) this.socket.connect();
    }
  }

  /**
   * Record a local edit; it is sent after a pause in typing and kept until
   * acknowledged. `base` is sourceHash() of the server text it was typed on
   * (used only when nothing of this cell was pending).
   */
  editSource(cellId: string, source: string, kind: CellKind, index: number, base: string): void {
    this.lastRev += 1;
    this.touched.add(cellId);
    // Typing moved to another cell: the cells left behind are done for now, so save them without waiting for a pause.
    for (const other of Object.keys(this.pending)) if (other !== cellId) this.sendSource(other);
    this.setPending(recordEdit(this.pending, cellId, { source, kind, index, base }, this.lastRev));
    if (this.sourceTimer !== null) clearTimeout(this.sourceTimer);
    this.sourceTimer = setTimeout(() => {
      this.sourceTimer = null;
      this.flushSources();
    }, this.debounceMs);
  }

  /** Send every unsent source edit now (before a run, on page hide). */
  flushSources(): void {
    if (this.sourceTimer !== null) {
      clearTimeout(this.sourceTimer);
      this.sourceTimer = null;
    }
    if (!this.synced) return;
    for (const cellId of Object.keys(this.pending)) this.sendSource(cellId);
  }

  /** The user's answer to a conflict: forget the local edit, or overwrite the other tab's text. */
  resolveConflict(cellId: string, choice: ConflictChoice): void {
    const conflict = this.conflictsByCell[cellId];
    if (conflict === undefined) return;
    const { [cellId]: _resolved, ...rest } = this.conflictsByCell;
    this.conflictsByCell = rest;
    this.touched.add(cellId);
    if (choice === "use-theirs") this.setPending(forgetCell(this.pending, cellId));
    else this.setPending(keepMine(this.pending, cellId, conflict.theirSource));
    this.listener.changed();
    if (choice === "keep-mine") this.sendSource(cellId);
  }

  private sendSource(cellId: string): void {
    const edit = this.pending[cellId];
    if (edit === undefined || !this.synced || this.inFlight.has(cellId) || cellId in this.conflictsByCell) return;
    this.inFlight.add(cellId);
    // Counted as sent before the answer: a reconnect drops the answer (below), and the write may have landed.
    this.rememberUnconfirmed(cellId, edit.source);
    const session = this.session;
    void this.emit(setSourceCommand(this.notebookId, cellId, edit)).then((reply) => {
      if (session !== this.session) return; // a reconnect cleared in-flight sends and re-sends pending text itself
      this.inFlight.delete(cellId);
      const outcome = classifySourceReply(reply, edit.source);
      switch (outcome.kind) {
        case "saved":
          this.unconfirmed.delete(cellId);
          this.lastSaveError = null;
          this.setPending(acknowledgeEdit(this.pending, cellId, edit.rev, edit.source));
          this.listener.changed();
          // Typed while this send was out: send the newer text now unless a debounced flush is coming.
          if (this.pending[cellId] !== undefined && this.sourceTimer === null) this.sendSource(cellId);
          return;
        case "conflict":
          if (this.pending[cellId] === undefined) return; // deleted meanwhile
          if (this.unconfirmed.get(cellId)?.includes(outcome.theirSource) === true) {
            // The server has a text this page sent (its answer was lost): our own write, so the newer text goes on top of it.
            this.unconfirmed.delete(cellId);
            this.setPending(rebaseOnOwnWrite(this.pending, cellId, outcome.theirSource));
            this.sendSource(cellId);
            return;
          }
          this.conflictsByCell = { ...this.conflictsByCell, [cellId]: { theirSource: outcome.theirSource } };
          this.listener.conflict(cellId, outcome.theirSource);
          this.listener.changed();
          this.recheckSaves();
          return;
        case "refused":
          this.lastSaveError = { error: outcome.error, code: reply.ok ? "internal" : reply.code };
          this.listener.changed();
          this.recheckSaves();
          this.scheduleRetry();
          return;
        case "lost":
          // Kept; sent again shortly (a reconnect also re-sends it).
          this.scheduleRetry();
          return;
      }
    });
  }

  private rememberUnconfirmed(cellId: string, source: string): void {
    const sent = (this.unconfirmed.get(cellId) ?? []).filter((text) => text !== source);
    // Only the last few: each one is a text the server may hold from a send whose answer was lost.
    this.unconfirmed.set(cellId, [...sent, source].slice(-UNCONFIRMED_PER_CELL));
  }

  /** A structural change the caller already applied locally. */
  sendStructural(command: StructuralCommand): void {
    if (command.op === "delete-cell") {
      this.touched.add(command.cellId);
      this.unconfirmed.delete(command.cellId);
      this.setPending(forgetCell(this.pending, command.cellId));
      if (command.cellId in this.conflictsByCell) {
        const { [command.cellId]: _gone, ...rest } = this.conflictsByCell;
        this.conflictsByCell = rest;
      }
    }
    const entry: OutboxEntry = { command, sentIn: 0 };
    this.outbox.push(entry);
    if (this.synced) this.sendOutboxEntry(entry);
  }

  /**
   * Execute / interrupt / restart: only while connected; resolves with the
   * server's answer. A run is sent once the edits of its cells are saved: the
   * server runs what it stores.
   */
  async sendControl(command: ControlCommand): Promise<NotebookAnswer<ControlOp>> {
    if (!this.synced) return { ok: false, error: NOT_CONNECTED, code: "unavailable" };
    if (command.op === "execute") {
      this.flushSources();
      const unsaved = await this.whenSaved(command.cellIds);
      if (unsaved !== null) return unsaved;
    }
    const reply = await this.emit(command);
    return isLost(reply) ? { ok: false, error: reply.error, code: reply.code } : reply;
  }

  /** Resolves null once none of `cellIds` has an unsaved edit, or why not (a conflict, a refusal, a timeout). */
  private whenSaved(cellIds: readonly string[]): Promise<Failure | null> {
    const check = (): Failure | null | "wait" => {
      const conflicted = cellIds.find((cellId) => cellId in this.conflictsByCell);
      if (conflicted !== undefined) return { ok: false, code: "conflict", error: `cell ${conflicted} was changed in another tab: choose “Use theirs” or “Keep mine” first` };
      if (!cellIds.some((cellId) => this.pending[cellId] !== undefined)) return null;
      if (this.lastSaveError !== null) return { ok: false, code: this.lastSaveError.code, error: `a cell to run could not be saved: ${this.lastSaveError.error}` };
      return "wait";
    };
    const first = check();
    if (first !== "wait") return Promise.resolve(first);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish({ ok: false, code: "unavailable", error: "the cells' latest text did not reach the server in time; try again" }), this.ackTimeoutMs);
      const finish = (outcome: Failure | null): void => {
        clearTimeout(timer);
        this.saveWaiters.delete(recheck);
        resolve(outcome);
      };
      const recheck = (): void => {
        const now = check();
        if (now !== "wait") finish(now);
      };
      this.saveWaiters.add(recheck);
    });
  }

  /** A notebook-list command (rename, restore…) over this page's socket; resolves with the op's own answer. */
  sendLab<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    const socket = this.socket;
    if (socket === null || !socket.connected) return Promise.resolve({ ok: false, error: NOT_CONNECTED, code: "unavailable" });
    return new Promise((resolve) => {
      socket.timeout(this.ackTimeoutMs).emit("lab:command", command, (err: Error | null, reply: unknown) => {
        resolve(err !== null ? { ok: false, error: NO_ANSWER, code: "unavailable" } : labAnswerOf<Op>(command.op, reply));
      });
    });
  }

  private onConnect(): void {
    const socket = this.socket;
    if (socket === null) return;
    this.session += 1;
    this.synced = false;
    this.early = [];
    this.inFlight.clear();
    const session = this.session;
    if (this.current.status === "offline" || !this.everConnected) {
      this.setState(this.everConnected ? { status: "reconnecting", attempt: 0, lastError: null } : { status: "connecting" });
    }
    const open: NotebookSend<"open"> =
      this.journal === null ? { op: "open", notebookId: this.notebookId } : { op: "open", notebookId: this.notebookId, resume: this.journal };
    void this.emit(open).then((ack) => {
      if (session !== this.session || this.socket !== socket) return;
      if (isLost(ack)) {
        // No answer: ask again while the socket is up (a reconnect asks by itself).
        setTimeout(() => {
          if (session === this.session && this.socket === socket && socket.connected) this.onConnect();
        }, RETRY_MS);
        return;
      }
      const resumable = ack.ok && ack.missed !== undefined && this.journal !== null;
      if (!ack.ok && classifyOpenError(ack.code) === "not-found") {
        // Nothing to reconnect to: stop here (typed drafts stay in the browser).
        this.writeDraftNow();
        this.closeSocket();
        this.setState({ status: "not-found", reason: ack.error });
        return;
      }
      if (!ack.ok && ack.code === "unavailable") {
        // A part of the lab is away for now (the server that drove this notebook died, and another takes it over after its lease): ask again.
        this.setState({ status: "reconnecting", attempt: 0, lastError: ack.error });
        setTimeout(() => {
          if (session === this.session && this.socket === socket && socket.connected) this.onConnect();
        }, RETRY_MS);
        return;
      }
      if (!ack.ok || (ack.notebook === undefined && !resumable)) {
        // The reply's schema lets either be absent (one or the other comes): neither is no way to show the notebook.
        const error = ack.ok ? "the server sent neither a notebook nor the missed events" : ack.error;
        this.setState({ status: "offline", reason: `could not open the notebook: ${error}` });
        this.listener.error(`Could not open notebook: ${error}`);
        return;
      }
      this.onOpened(ack, socket.id ?? "");
    });
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

  private visible = true;

  private onOpened(ack: NotebookReply<"open">, socketId: string): void {
    this.synced = true;
    this.everConnected = true;
    this.setState({ status: "connected", socketId });
    this.listener.access(ack.access);
    if (!this.visible) void this.emit({ op: "presence", notebookId: this.notebookId, visible: false });
    for (const entry of this.outbox) this.sendOutboxEntry(entry);
    if (ack.notebook !== undefined) {
      this.journal = ack.journal;
      this.listener.snapshot(ack.notebook);
    } else {
      for (const missed of ack.missed ?? []) this.applySequenced(missed.seq, missed.event);
      if (this.journal !== null && ack.journal.seq !== this.journal.seq) {
        // The missed events did not reach where the server says they end: start over.
        this.journal = null;
        this.resync();
        return;
      }
    }
    const early = this.early;
    this.early = [];
    for (const e of early) this.applySequenced(e.seq, e.event);
    this.flushSources();
  }

  /** Apply one event in journal order: skip what is already applied, re-open on a gap. */
  private applySequenced(seq: number, event: NotebookEvent): void {
    const at = this.journal;
    if (at === null) {
      this.listener.event(event);
      return;
    }
    if (seq <= at.seq) return;
    if (seq !== at.seq + 1) {
      this.resync();
      return;
    }
    this.journal = { epoch: at.epoch, seq };
    this.listener.event(event);
  }

  private sendOutboxEntry(entry: OutboxEntry): void {
    if (entry.sentIn === this.session) return;
    entry.sentIn = this.session;
    const session = this.session;
    void this.emit(entry.command).then((ack) => {
      if (ack.ok) {
        this.outbox = this.outbox.filter((e) => e !== entry);
        this.listener.changed();
        return;
      }
      if (isLost(ack)) {
        // Still in the outbox: sent again on the next (re)open.
        if (entry.sentIn === session) entry.sentIn = 0;
        return;
      }
      // Refused (e.g. the cell is gone): drop it and take the server's view again.
      this.outbox = this.outbox.filter((e) => e !== entry);
      this.listener.changed();
      this.listener.error(`${entry.command.op} refused: ${ack.error}`);
      if (session === this.session) this.resync();
    });
  }

  /** Ask for a fresh snapshot on the current socket. */
  private resync(): void {
    if (this.socket?.connected === true) this.onConnect();
  }

  private onDisconnect(reason: string): void {
    this.synced = false;
    const policy = classifyDisconnect(reason);
    this.writeDraftNow();
    if (policy === "closed") return;
    if (this.current.status !== "offline") {
      this.setState({ status: "reconnecting", attempt: 0, lastError: reason });
    }
    if (policy === "reconnect-ourselves") {
      const socket = this.socket;
      setTimeout(() => {
        if (this.socket === socket && socket !== null && !socket.connected) socket.connect();
      }, 500 + Math.random() * 1000);
    }
  }

  /** The session is over: keep what was typed as a draft and stop for good (signing in again reloads the page). */
  private onSessionEnded(reason: SessionEnd): void {
    this.writeDraftNow();
    this.closeSocket();
    this.setState({ status: "signed-out", reason: sessionEndWords(reason) });
  }

  private connectError: string | null = null;

  private readonly onReconnectAttempt = (attempt: number): void => {
    if (this.current.status !== "offline") {
      this.setState({ status: "reconnecting", attempt, lastError: this.connectError });
    }
  };

  private onConnectError(err: Error): void {
    this.connectError = err.message;
    if (this.current.status === "reconnecting") {
      this.setState({ ...this.current, lastError: err.message });
    }
  }

  /**
   * Completion and inspection: answered now or not at all (within
   * `timeoutMs`; the editor then falls back to words of the cell), never
   * queued for a reconnect.
   */
  async ask<Op extends AssistOp>(command: NotebookSend<Op>, timeoutMs = ASK_TIMEOUT_MS): Promise<NotebookAnswer<Op>> {
    if (!this.synced) return { ok: false, error: NOT_CONNECTED, code: "unavailable" };
    const reply = await this.emit(command, timeoutMs);
    return isLost(reply) ? { ok: false, error: reply.error, code: reply.code } : reply;
  }

  /** Sends `command`; resolves with its op's own answer (checked against the op's reply schema), or that none came. */
  private emit<Op extends NotebookOp>(command: NotebookSend<Op>, timeoutMs = this.ackTimeoutMs): Promise<Reply<Op>> {
    const socket = this.socket;
    if (socket === null || !socket.connected) return Promise.resolve({ ok: false, error: NOT_CONNECTED, code: "unavailable", lost: true });
    // Past the transport's cap the server would close the connection: refuse here, with the reason.
    const tooLarge = messageTooLarge(command);
    if (tooLarge !== null) return Promise.resolve({ ok: false, error: tooLarge, code: "too-large" });
    return new Promise((resolve) => {
      socket.timeout(timeoutMs).emit("notebook:command", command, (err: Error | null, reply: unknown) => {
        resolve(err !== null ? { ok: false, error: NO_ANSWER, code: "unavailable", lost: true } : notebookAnswerOf<Op>(command.op, reply));
      });
    });
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.flushSources();
    }, RETRY_MS);
  }

  private setPending(pending: PendingEdits): void {
    if (pending === this.pending) return;
    this.pending = pending;
    this.scheduleDraftWrite();
    this.recheckSaves();
  }

  private recheckSaves(): void {
    for (const recheck of [...this.saveWaiters]) recheck();
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.listener.state(state);
  }

  private scheduleDraftWrite(): void {
    if (this.draftTimer !== null) return;
    this.draftTimer = setTimeout(() => {
      this.draftTimer = null;
      this.writeDraftNow();
    }, 200);
  }

  /** Persist (or clear) the draft right away: called on page hide and disconnect. */
  writeDraftNow(): void {
    const drafts = this.options.drafts;
    if (drafts === undefined || drafts === null) return;
    const key = draftKey(this.notebookId);
    try {
      const stored = parseDraft(this.notebookId, drafts.getItem(key));
      const text = serializeDraft(this.notebookId, mergeDraft(stored, this.pending, this.touched), Date.now());
      if (text === null) drafts.removeItem(key);
      else drafts.setItem(key, text);
    } catch (err) {
      // Quota exceeded or storage disabled: the edits still live in memory.
      if (!(err instanceof DOMException)) throw err;
      this.listener.error(`Could not keep a local draft: ${err.message}`);
    }
  }
}

const NOT_CONNECTED = "not connected to the server";
const NO_ANSWER = "no answer from the server (timed out or disconnected)";
const RETRY_MS = 3_000;
/** Unanswered sends remembered per cell (each failed try of a retried edit adds one only if its text is new). */
const UNCONFIRMED_PER_CELL = 16;
