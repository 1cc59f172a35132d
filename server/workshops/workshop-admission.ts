/**
 * Who gets a seat: participants are admitted first come, first served while
 * the workshop has room (one admission decision at a time per workshop, so
 * concurrent joins never pass the capacity); an admitted participant gets a
 * copy of each scenario on the plan's host and GPUs, and their kernel when
 * the start is near. Separate from Workshops: the one place seats and
 * copies are decided.
 */
import { CommandError } from "../errors";
import type { WorkshopRepository, WorkshopRow } from "../persistence/workshop-repository";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";

/** Participants' kernels start this long before the start time. */
export const PRESTART_LEAD_MS = 10 * 60_000;

type AdmissionStore = Pick<WorkshopRepository, "find" | "seatedCount" | "seatLongestWaiting" | "admissionOf" | "copiedTemplateIds" | "placeKernel">;

export class WorkshopAdmission {
  /** Admission decisions one at a time per workshop. */
  private readonly admissions = new Map<string, Promise<unknown>>();

  constructor(
    private readonly stored: AdmissionStore,
    private readonly hub: Pick<NotebookHub, "catalog" | "hosts">,
    private readonly scenarios: Pick<ScenarioCatalog, "list" | "notebookCells">,
    /** Starts the admitted participants' kernels (WorkshopKernels.prestart). */
    private readonly prestart: (workshop: WorkshopRow) => Promise<void>,
  ) {}

  /** Admits the longest-waiting participants while there is room (seats decided one workshop change at a time; copies made after). */
  async admitWaiting(workshopId: string): Promise<void> {
    const { workshop, admitted } = await this.serially(workshopId, async () => {
      const row = await this.stored.find(workshopId);
      if (!row) throw new CommandError("not-found", `workshop ${workshopId} not found`);
      const room = row.capacity - (await this.stored.seatedCount(workshopId));
      if (room <= 0) return { workshop: row, admitted: [] };
      return { workshop: row, admitted: await this.stored.seatLongestWaiting(workshopId, room) };
    });
    for (const participantId of admitted) await this.settle(participantId, workshop);
  }

  /**
   * A participant may make a copy of one of the workshop's scenarios only
   * once admitted and before the end: the queue cannot be skipped through the
   * scenario list.
   */
  async requireAdmitted(participantId: string): Promise<void> {
    const user = await this.stored.admissionOf(participantId);
    if (user?.workshopEnded) throw new CommandError("forbidden", "this workshop has ended: its notebooks are read-only");
    if (user?.waiting) throw new CommandError("forbidden", "you are still in the admission queue: your notebooks open when a seat is free");
  }

  /** An admitted participant's copies, and their kernel when the start is near. */
  private async settle(participantId: string, workshop: WorkshopRow): Promise<void> {
    await this.giveCopies(participantId, workshop);
    if (workshop.startsAt === null || workshop.startsAt.getTime() - PRESTART_LEAD_MS <= Date.now()) void this.prestart(workshop);
  }

  /** Each scenario of the workshop the participant has no copy of yet, as their own notebook, on the plan's host and GPUs. */
  private async giveCopies(participantId: string, workshop: WorkshopRow): Promise<void> {
    const owned = await this.stored.copiedTemplateIds(participantId, workshop.id);
    const have = new Set(owned.map((templateId) => templateId.split("/")[0]));
    const summaries = await this.scenarios.list();
    for (const scenarioId of workshop.scenarioIds) {
      const summary = summaries.find((scenario) => scenario.id === scenarioId);
      if (!summary || have.has(scenarioId)) continue;
      const cells = await this.scenarios.notebookCells(scenarioId, {});
      const made = await this.hub.catalog.createWithCells(participantId, summary.title, cells, workshop.id);
      if (workshop.hostId !== null || workshop.gpusPerParticipant > 0) {
        await this.stored.placeKernel(made.id, workshop.hostId ?? this.hub.hosts.defaultHost, workshop.gpusPerParticipant);
      }
    }
  }

  private serially<T>(workshopId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.admissions.get(workshopId) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.admissions.set(workshopId, next.catch(() => undefined));
    return next;
  }
}
