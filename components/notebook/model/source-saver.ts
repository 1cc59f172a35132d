/**
 * Typed text on its way to the server, and the conflicts it meets: edits are
 * debounced and coalesced per cell, kept until acknowledged; at most one
 * `set-source` per cell is in flight, each carrying the base it was typed
 * on; one the server refuses as a conflict waits for the user's choice
 * (`resolveConflict`) and is not sent again until then; a "conflict" with a
 * text this page sent itself but never heard back about (the write landed,
 * its answer was lost), or with the text it was just told is saved (its
 * event not here yet), is its own write: the newer text is re-based on it
 * and sent again. A run waits here until its cells' text is saved.
 * Separate from the socket: it says what to send and when, the connection
 * says whether it can.
 */
import type { CellKind } from "../../../server/core/protocol/notebook-model";
import type { NotebookSend } from "../../../server/core/protocol/ops-notebook";
import { DraftKeeper, type DraftStore } from "./draft-keeper";
import {
  acknowledgeEdit,
  classifySourceReply,
  forgetCell,
  keepMine,
  maxRev,
  rebaseOnOwnWrite,
  recordEdit,
  setSourceCommand,
  type PendingEdits,
} from "./pending-edits";
import type { Failure, Reply } from "../../shell/model/socket-rpc";

/** A cell whose edit the server refused: another tab changed it first. */
export interface CellConflict {
  /** The cell's text on the server when our edit was refused. */
  theirSource: string;
}

export type CellConflicts = Readonly<Record<string, CellConflict>>;

export type ConflictChoice = "use-theirs" | "keep-mine";

/** What the saver needs of the connection. */
export interface SourceLink {
  readonly notebookId: string;
  /** Whether the notebook is open on a live socket (sends are possible). */
  synced(): boolean;
  /** The current socket session: an answer from an older one is dropped (a reconnect re-sends pending text itself). */
  session(): number;
  send(command: NotebookSend<"set-source">): Promise<Reply<"set-source">>;
  /** The server refused our edit of this cell: its text is now `theirSource`. */
  conflict(cellId: string, theirSource: string): void;
  /** The pending edits or the conflicts changed without a call from the page (an answer arrived). */
  changed(): void;
  error(message: string): void;
}

export interface SaverOptions {
  drafts?: DraftStore | null;
  debounceMs?: number;
  /** How long a run waits for its cells' text to be saved. */
  saveWaitMs?: number;
}

const RETRY_MS = 3_000;
/** Own texts remembered per cell (each failed try of a retried edit adds one only if its text is new). */
const OWN_TEXTS_PER_CELL = 16;

export class SourceSaver {
  private pending: PendingEdits;
  /** Cells this page has edited, saved or deleted: its view of them goes into the shared draft. */
  private readonly touched = new Set<string>();
  /** Source revisions never repeat, even after every edit was acknowledged. */
  private lastRev: number;
  /** Cells whose `set-source` awaits its answer in the current session. */
  private readonly inFlight = new Set<string>();
  /**
   * Per cell, the texts the server may hold as this page's own write: the
   * last one it answered "saved" for, and those sent since whose answer
   * never came (lost, timed out, refused by a server that may have stored
   * it anyway). The server holding one of them is our write, not another
   * tab's: a write that landed unanswered, or a saved one whose cell-source
   * event is not here yet (it waits for its commit, and crosses Redis
   * between servers), so an edit typed meanwhile was based on the page's
   * older copy.
   */
  private readonly ownTexts = new Map<string, string[]>();
  private conflictsByCell: CellConflicts = {};
  /** Why the last save was refused, until one succeeds. */
  private lastSaveError: Omit<Failure, "ok"> | null = null;
  /** Runs waiting for their cells' edits to be saved; each re-checks when the edits' state changes. */
  private readonly saveWaiters = new Set<() => void>();
  private sourceTimer: ReturnType<typeof setTimeout> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly drafts: DraftKeeper;
  private readonly debounceMs: number;
  private readonly saveWaitMs: number;

  constructor(
    private readonly link: SourceLink,
    options: SaverOptions = {},
  ) {
    this.debounceMs = options.debounceMs ?? 300;
    this.saveWaitMs = options.saveWaitMs ?? 15_000;
    this.drafts = new DraftKeeper(link.notebookId, options.drafts ?? null, () => ({ pending: this.pending, touched: this.touched }), (m) => link.error(m));
    this.pending = this.drafts.read();
    for (const cellId of Object.keys(this.pending)) this.touched.add(cellId);
    this.lastRev = maxRev(this.pending);
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

  /** Records a local edit, sent after a pause in typing. `base`: sourceHash() of the server text it was typed on. */
  edit(cellId: string, source: string, kind: CellKind, index: number, base: string): void {
    this.lastRev += 1;
    this.touched.add(cellId);
    // Typing moved to another cell: the cells left behind are done for now, so save them without waiting for a pause.
    for (const other of Object.keys(this.pending)) if (other !== cellId) this.sendSource(other);
    this.setPending(recordEdit(this.pending, cellId, { source, kind, index, base }, this.lastRev));
    if (this.sourceTimer !== null) clearTimeout(this.sourceTimer);
    this.sourceTimer = setTimeout(() => {
      this.sourceTimer = null;
      this.flush();
    }, this.debounceMs);
  }

  /** Send every unsent source edit now (before a run, on page hide, once the notebook is open). */
  flush(): void {
    if (this.sourceTimer !== null) {
      clearTimeout(this.sourceTimer);
      this.sourceTimer = null;
    }
    if (!this.link.synced()) return;
    for (const cellId of Object.keys(this.pending)) this.sendSource(cellId);
  }

  /** A new socket session: answers of the old one will be dropped, so nothing is in flight any more. */
  newSession(): void {
    this.inFlight.clear();
  }

  /** The user's answer to a conflict: forget the local edit, or overwrite the other tab's text. */
  resolveConflict(cellId: string, choice: ConflictChoice): void {
    const conflict = this.conflictsByCell[cellId];
    if (conflict === undefined) return;
    this.dropConflict(cellId);
    this.touched.add(cellId);
    if (choice === "use-theirs") this.setPending(forgetCell(this.pending, cellId));
    else this.setPending(keepMine(this.pending, cellId, conflict.theirSource));
    this.link.changed();
    if (choice === "keep-mine") this.sendSource(cellId);
  }

  /** The cell is being deleted: its text and its conflict go with it. */
  cellDeleted(cellId: string): void {
    this.touched.add(cellId);
    this.ownTexts.delete(cellId);
    this.setPending(forgetCell(this.pending, cellId));
    this.dropConflict(cellId);
  }

  /** Resolves null once none of `cellIds` has an unsaved edit, or why not (a conflict, a refusal, a timeout). */
  whenSaved(cellIds: readonly string[]): Promise<Failure | null> {
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
      const timer = setTimeout(() => finish({ ok: false, code: "unavailable", error: "the cells' latest text did not reach the server in time; try again" }), this.saveWaitMs);
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

  /** Persist (or clear) the draft right away: on page hide and disconnect. */
  writeDraftNow(): void {
    this.drafts.writeNow();
  }

  /** The page goes: send what can be sent, keep the rest as a draft, stop the timers. */
  stop(): void {
    this.flush();
    this.drafts.writeNow();
    this.drafts.stop();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
  }

  private sendSource(cellId: string): void {
    const edit = this.pending[cellId];
    if (edit === undefined || !this.link.synced() || this.inFlight.has(cellId) || cellId in this.conflictsByCell) return;
    this.inFlight.add(cellId);
    // Counted as sent before the answer: a reconnect drops the answer (below), and the write may have landed.
    this.rememberOwnText(cellId, edit.source);
    const session = this.link.session();
    void this.link.send(setSourceCommand(this.link.notebookId, cellId, edit)).then((reply) => {
      if (session !== this.link.session()) return; // a reconnect cleared in-flight sends and re-sends pending text itself
      this.inFlight.delete(cellId);
      const outcome = classifySourceReply(reply, edit.source);
      switch (outcome.kind) {
        case "saved":
          this.ownTexts.set(cellId, [edit.source]);
          this.lastSaveError = null;
          this.setPending(acknowledgeEdit(this.pending, cellId, edit.rev, edit.source));
          this.link.changed();
          // Typed while this send was out: send the newer text now unless a debounced flush is coming.
          if (this.pending[cellId] !== undefined && this.sourceTimer === null) this.sendSource(cellId);
          return;
        case "conflict":
          if (this.pending[cellId] === undefined) return; // deleted meanwhile
          if (this.ownTexts.get(cellId)?.includes(outcome.theirSource) === true) {
            // The server has a text this page sent (its answer lost, or its event not here yet): our own write, so the newer text goes on top of it.
            this.ownTexts.delete(cellId);
            this.setPending(rebaseOnOwnWrite(this.pending, cellId, outcome.theirSource));
            this.sendSource(cellId);
            return;
          }
          this.conflictsByCell = { ...this.conflictsByCell, [cellId]: { theirSource: outcome.theirSource } };
          this.link.conflict(cellId, outcome.theirSource);
          this.link.changed();
          this.recheckSaves();
          return;
        case "refused":
          this.lastSaveError = { error: outcome.error, code: reply.ok ? "internal" : reply.code };
          this.link.changed();
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

  private rememberOwnText(cellId: string, source: string): void {
    const sent = (this.ownTexts.get(cellId) ?? []).filter((text) => text !== source);
    // Only the last few: each one is a text the server may hold from a send whose answer was lost.
    this.ownTexts.set(cellId, [...sent, source].slice(-OWN_TEXTS_PER_CELL));
  }

  private dropConflict(cellId: string): void {
    if (!(cellId in this.conflictsByCell)) return;
    const { [cellId]: _gone, ...rest } = this.conflictsByCell;
    this.conflictsByCell = rest;
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.flush();
    }, RETRY_MS);
  }

  private setPending(pending: PendingEdits): void {
    if (pending === this.pending) return;
    this.pending = pending;
    this.drafts.writeSoon();
    this.recheckSaves();
  }

  private recheckSaves(): void {
    for (const recheck of [...this.saveWaiters]) recheck();
  }
}
