/**
 * Keeps each workshop's console and participants up to date: anything that
 * changes what they show (a join, a setting, a broadcast, a participant's
 * kernel, run, prediction or verdict) marks the workshop changed, and its
 * views are recomputed from the database and pushed at most once per
 * `debounceMs`, after the change is stored (notebook events reach here
 * after their writes commit). Also counts who is connected.
 */
import type { NotebookEvent } from "../core/protocol/socket-api";
import type { ParticipantWorkshopView, WorkshopConsoleView } from "../core/protocol/workshop-model";
import type { PrismaClient } from "../persistence";

export interface WorkshopPush {
  console(workshopId: string, view: WorkshopConsoleView): void;
  participant(userId: string, view: ParticipantWorkshopView): void;
}

type Compute = (workshopId: string) => Promise<{ console: WorkshopConsoleView; participants: Map<string, ParticipantWorkshopView> }>;

/** Notebook events that change the roster, the tallies or the verdicts; output streams and metrics do not. */
const ROSTER_EVENTS = new Set<NotebookEvent["type"]>(["kernel-status", "cell-run-state", "cell-finished", "prediction-committed", "cell-output", "cell-template", "notebook-renamed", "notebook-deleted", "notebook-restored"]);

export class WorkshopLive {
  private push: WorkshopPush | null = null;
  private readonly online = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;
  /** Notebook → its workshop (null: none), read once per notebook. */
  private readonly workshopOf = new Map<string, Promise<string | null>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly compute: Compute,
    private readonly onError: (message: string) => void = () => undefined,
    private readonly debounceMs = 100,
  ) {}

  attach(push: WorkshopPush): void {
    this.push = push;
  }

  changed(workshopId: string): void {
    if (!this.push) return;
    this.dirty.add(workshopId);
    this.schedule();
  }

  /** Every notebook event (after it is stored): a workshop copy's roster-relevant ones mark its workshop changed. */
  notebookEvent(notebookId: string, event: NotebookEvent): void {
    if (!this.push || !ROSTER_EVENTS.has(event.type)) return;
    let workshop = this.workshopOf.get(notebookId);
    if (!workshop) {
      workshop = this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { workshopId: true } }).then((row) => row?.workshopId ?? null);
      this.workshopOf.set(notebookId, workshop);
    }
    void workshop.then(
      (workshopId) => {
        if (workshopId !== null) this.changed(workshopId);
      },
      () => this.workshopOf.delete(notebookId),
    );
  }

  /** A participant's socket connected or went: the roster shows who is online. */
  connected(userId: string, workshopId: string): void {
    this.online.set(userId, (this.online.get(userId) ?? 0) + 1);
    this.changed(workshopId);
  }

  disconnected(userId: string, workshopId: string): void {
    const left = (this.online.get(userId) ?? 1) - 1;
    if (left <= 0) this.online.delete(userId);
    else this.online.set(userId, left);
    this.changed(workshopId);
  }

  isOnline(userId: string): boolean {
    return (this.online.get(userId) ?? 0) > 0;
  }

  private schedule(): void {
    if (this.timer !== null || this.flushing) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.debounceMs);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const workshops = [...this.dirty];
    this.dirty.clear();
    for (const workshopId of workshops) {
      try {
        const views = await this.compute(workshopId);
        this.push?.console(workshopId, views.console);
        for (const [userId, view] of views.participants) this.push?.participant(userId, view);
      } catch (error) {
        this.onError(`workshop ${workshopId}: the live view failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.flushing = false;
    if (this.dirty.size > 0) this.schedule();
  }
}
