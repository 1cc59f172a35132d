/**
 * Keeps each workshop's console and participants up to date. What changes
 * the workshop itself (a join, a setting, a broadcast, the end) marks both
 * its console and its participants' views changed; what happens inside a
 * copy (a participant's kernel, run, prediction or verdict) and who is
 * connected change only the console. Views are recomputed from the
 * database after the change is stored (notebook events reach here after
 * their writes commit), the console's only while a console is open, at
 * most once per `debounceMs` and never more than half the time; a
 * participant is sent their view only when it differs from the last one.
 */
import type { NotebookEvent } from "../core/protocol/socket-api";
import type { ParticipantWorkshopView, WorkshopConsoleView } from "../core/protocol/workshop-model";
import type { WorkshopRepository } from "../persistence/workshop-repository";
import { errorMessage } from "../core/errors";

export interface WorkshopPush {
  console(workshopId: string, view: WorkshopConsoleView): void;
  participant(userId: string, view: ParticipantWorkshopView): void;
  /** Whether a console of this workshop is open (its view is computed only then). */
  watching(workshopId: string): boolean;
}

export interface WorkshopViews {
  console(workshopId: string): Promise<WorkshopConsoleView>;
  participants(workshopId: string): Promise<Map<string, ParticipantWorkshopView>>;
}

/** Notebook events that change the roster, the tallies or the verdicts; output streams and metrics do not. */
const ROSTER_EVENTS = new Set<NotebookEvent["type"]>(["kernel-status", "cell-run-state", "cell-finished", "prediction-committed", "cell-output", "cell-template", "notebook-renamed", "notebook-deleted", "notebook-restored"]);

export class WorkshopLive {
  private push: WorkshopPush | null = null;
  private readonly online = new Map<string, number>();
  /** The copy each participant opened last on this server, and when (the roster's "on" column). */
  private readonly openedBy = new Map<string, { notebookId: string; at: Date }>();
  private readonly consoleDirty = new Set<string>();
  private readonly participantsDirty = new Set<string>();
  /** The JSON each participant was last sent. */
  private readonly sent = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;
  /** The flush in progress (closing waits for it). */
  private flushed: Promise<void> = Promise.resolve();
  /** How long the last flush took: the next waits at least as long. */
  private lastFlushMs = 0;
  /** Lookups of a notebook's workshop in progress (closing waits for them). */
  private readonly lookups = new Set<Promise<string | null>>();
  /** Notebook → its workshop (null: none), read once per notebook. */
  private readonly workshopOf = new Map<string, Promise<string | null>>();

  constructor(
    private readonly stored: Pick<WorkshopRepository, "workshopOfNotebook">,
    private readonly views: WorkshopViews,
    private readonly onError: (message: string) => void = () => undefined,
    private readonly debounceMs = 100,
  ) {}

  attach(push: WorkshopPush): void {
    this.push = push;
  }

  /** No more pushes or queries: the pending one is dropped, the one in progress finishes. */
  async close(): Promise<void> {
    this.push = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.consoleDirty.clear();
    this.participantsDirty.clear();
    await Promise.allSettled([...this.lookups]);
    await this.flushed;
  }

  /** The workshop itself changed: its console and every participant's view. */
  changed(workshopId: string): void {
    if (!this.push) return;
    this.consoleDirty.add(workshopId);
    this.participantsDirty.add(workshopId);
    this.schedule();
  }

  /** Something inside the workshop changed that only the console shows. */
  consoleChanged(workshopId: string): void {
    if (!this.push) return;
    this.consoleDirty.add(workshopId);
    this.schedule();
  }

  /** Every notebook event (after it is stored): a workshop copy's roster-relevant ones mark its console changed. */
  notebookEvent(notebookId: string, event: NotebookEvent): void {
    if (!this.push || !ROSTER_EVENTS.has(event.type)) return;
    let workshop = this.workshopOf.get(notebookId);
    if (!workshop) {
      workshop = this.stored.workshopOfNotebook(notebookId);
      this.workshopOf.set(notebookId, workshop);
    }
    void workshop.then(
      (workshopId) => {
        if (workshopId !== null) this.consoleChanged(workshopId);
      },
      () => this.workshopOf.delete(notebookId),
    );
    this.lookups.add(workshop);
    void workshop.finally(() => this.lookups.delete(workshop)).catch(() => undefined);
  }

  /** A participant's socket connected or went: the roster shows who is online. */
  connected(userId: string, workshopId: string): void {
    this.online.set(userId, (this.online.get(userId) ?? 0) + 1);
    this.consoleChanged(workshopId);
  }

  disconnected(userId: string, workshopId: string): void {
    const left = (this.online.get(userId) ?? 1) - 1;
    if (left <= 0) {
      this.online.delete(userId);
      // A new connection is sent the view again (a page that opens asks for it anyway).
      this.sent.delete(userId);
    } else this.online.set(userId, left);
    this.consoleChanged(workshopId);
  }

  isOnline(userId: string): boolean {
    return (this.online.get(userId) ?? 0) > 0;
  }

  /** A participant opened one of their copies: the roster shows them on it (before they change anything there). */
  opened(userId: string, workshopId: string, notebookId: string): void {
    if (this.openedBy.get(userId)?.notebookId === notebookId) return;
    this.openedBy.set(userId, { notebookId, at: new Date() });
    this.consoleChanged(workshopId);
  }

  openedNotebook(userId: string): { notebookId: string; at: Date } | null {
    return this.openedBy.get(userId) ?? null;
  }

  private schedule(): void {
    if (this.timer !== null || this.flushing) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.flushed = this.flush();
      },
      Math.max(this.debounceMs, this.lastFlushMs),
    );
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const began = performance.now();
    const participants = [...this.participantsDirty];
    this.participantsDirty.clear();
    const consoles = [...this.consoleDirty];
    this.consoleDirty.clear();
    for (const workshopId of participants) {
      await this.attempt(workshopId, async () => {
        for (const [userId, view] of await this.views.participants(workshopId)) {
          const json = JSON.stringify(view);
          if (this.sent.get(userId) === json) continue;
          this.sent.set(userId, json);
          this.push?.participant(userId, view);
        }
      });
    }
    for (const workshopId of consoles) {
      if (!this.push?.watching(workshopId)) continue;
      await this.attempt(workshopId, async () => this.push?.console(workshopId, await this.views.console(workshopId)));
    }
    this.lastFlushMs = performance.now() - began;
    this.flushing = false;
    if (this.consoleDirty.size > 0 || this.participantsDirty.size > 0) this.schedule();
  }

  private async attempt(workshopId: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.onError(`workshop ${workshopId}: the live view failed: ${errorMessage(error)}`);
    }
  }
}
