/**
 * Workshops: a facilitator makes one from scenarios, with a start and an
 * end, a resource plan and a join code; participants join by name, are
 * admitted up to the plan's capacity (later arrivals wait in a queue with
 * their place: workshop-admission.ts), and get their own copy of each
 * scenario with a kernel started ahead of the start time
 * (workshop-kernels.ts). The facilitator's console view and each
 * participant's view are recomputed on every change and pushed live
 * (workshop-live.ts, in the words of workshop-plans.ts). At the end time
 * kernels shut down wherever they are driven and the copies turn read-only.
 * This class is the facade: it changes workshops and ties the pieces together.
 */
import { randomInt } from "node:crypto";
import { CommandError } from "../errors";
import { errorMessage } from "../core/errors";
import type { WorkshopView } from "../core/protocol/accounts-model";
import type { ParameterValue } from "../core/protocol/notebook-model";
import type { ParticipantWorkshopView, WorkshopConsoleView, WorkshopPace, WorkshopSettings } from "../core/protocol/workshop-model";
import type { WorkshopRepository, WorkshopRow } from "../persistence/workshop-repository";
import type { WorkshopRosterRepository } from "../persistence/workshop-roster-repository";
import type { NotebookDrivers } from "../cluster/notebook-drivers";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import type { Log } from "../logger";
import { consoleView, queuePositions } from "./console-view";
import { classSummaryCsv } from "./class-summary";
import { loadBroadcasts, loadParticipants, newFactsCache, type FactsCache } from "./workshop-facts";
import { WorkshopLive, type WorkshopPush } from "./workshop-live";
import { participantView, WorkshopPlans } from "./workshop-plans";
import { PRESTART_LEAD_MS, WorkshopAdmission } from "./workshop-admission";
import { WorkshopKernels } from "./workshop-kernels";

export { PRESTART_LEAD_MS } from "./workshop-admission";
export { WORKSHOP_ENDED_REASON } from "./workshop-notebooks";

/** Join codes avoid letters and digits that read alike (0/O, 1/I/L). */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;
export const DEFAULT_CAPACITY = 60;

export interface WorkshopOptions {
  startsAt?: string;
  endsAt?: string;
  capacity?: number;
  hostId?: string;
  gpusPerParticipant?: number;
  pace?: WorkshopPace;
}

export interface WorkshopChanges {
  closed?: boolean;
  capacity?: number;
  pace?: WorkshopPace;
  revealedSteps?: number;
  endsAt?: string | null;
  end?: true;
}

export interface WorkshopServices {
  stored: WorkshopRepository;
  roster: WorkshopRosterRepository;
  hub: NotebookHub;
  scenarios: ScenarioCatalog;
  /** Where an ended workshop's kernels shut down: on every server that drives one of its copies (the notebook drivers). */
  kernels: Pick<NotebookDrivers, "workshopEnded">;
  log?: Log;
}

export class Workshops {
  /** Who is connected, the console's and participants' pushes (set once the socket server exists). */
  readonly live: WorkshopLive;
  private readonly plans: WorkshopPlans;
  private readonly kernels: WorkshopKernels;
  private readonly admission: WorkshopAdmission;
  private readonly stored: WorkshopRepository;
  private readonly log: Log;
  private clock: NodeJS.Timeout | null = null;
  /** The clock's tick in progress: closing waits for it, so no query outlives the database. */
  private ticking: Promise<void> | null = null;
  /** Parsed verdict reports and questions per workshop, re-read only when their cell changed. */
  private readonly factsCaches = new Map<string, FactsCache>();

  constructor(private readonly services: WorkshopServices) {
    const { stored, hub, scenarios } = services;
    this.stored = stored;
    this.log = services.log ?? (() => undefined);
    this.live = new WorkshopLive(
      stored,
      { console: (workshopId) => this.consoleView(workshopId), participants: (workshopId) => this.participantViews(workshopId) },
      (message) => this.log("error", message),
    );
    this.plans = new WorkshopPlans(stored, hub, scenarios);
    this.kernels = new WorkshopKernels(stored, hub, (workshopId) => this.live.consoleChanged(workshopId), this.log);
    this.admission = new WorkshopAdmission(stored, hub, scenarios, (workshop) => this.kernels.prestart(workshop));
  }

  attach(push: WorkshopPush): void {
    this.live.attach(push);
  }

  async create(facilitatorId: string, title: string, scenarioIds: readonly string[], options: WorkshopOptions = {}): Promise<WorkshopView> {
    const known = new Set((await this.services.scenarios.list()).map((scenario) => scenario.id));
    const unknown = scenarioIds.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new CommandError("not-found", `no scenario ${unknown.join(", ")}`);
    const startsAt = options.startsAt ? new Date(options.startsAt) : null;
    const endsAt = options.endsAt ? new Date(options.endsAt) : null;
    if (startsAt && endsAt && endsAt <= startsAt) throw new CommandError("invalid", "the end time must be after the start time");
    if (endsAt && endsAt.getTime() <= Date.now()) throw new CommandError("invalid", "the end time is already past");
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    const gpus = options.gpusPerParticipant ?? 0;
    const hostId = this.plans.checkPlan(options.hostId ?? null, gpus, capacity);
    await this.plans.learnRanks(scenarioIds);
    // A code already taken (unique) is drawn again.
    const id = await this.stored.create({ title, facilitatorId, scenarioIds: [...new Set(scenarioIds)], startsAt, endsAt, capacity, hostId, gpusPerParticipant: gpus, pace: options.pace ?? "self" }, newJoinCode);
    return this.plans.view(id);
  }

  async listFor(facilitatorId: string): Promise<WorkshopView[]> {
    const rows = await this.stored.listFor(facilitatorId);
    await this.plans.learnRanks(rows.flatMap((row) => row.scenarioIds));
    return Promise.all(rows.map((row) => this.plans.view(row.id)));
  }

  /**
   * A participant who just joined: admitted while the workshop has room (their
   * copies made, their kernel started when the start is near), else queued.
   */
  async arrived(workshopId: string): Promise<void> {
    // A new participant arrives in the queue (since they joined); seats go first come, first served.
    await this.admission.admitWaiting(workshopId);
    this.live.changed(workshopId);
  }

  async update(workshopId: string, changes: WorkshopChanges): Promise<WorkshopSettings> {
    const workshop = await this.row(workshopId);
    if (workshop.endedAt !== null && (changes.end === undefined || Object.keys(changes).length > 1)) {
      throw new CommandError("invalid", "this workshop has ended: nothing about it can change");
    }
    if (changes.capacity !== undefined) this.plans.checkPlan(workshop.hostId, workshop.gpusPerParticipant, changes.capacity);
    const endsAt = changes.endsAt === undefined ? undefined : changes.endsAt === null ? null : new Date(changes.endsAt);
    if (endsAt && workshop.startsAt && endsAt <= workshop.startsAt) throw new CommandError("invalid", "the end time must be after the start time");
    await this.stored.update(workshopId, {
      ...(changes.closed === undefined ? {} : { closedAt: changes.closed ? (workshop.closedAt ?? new Date()) : null }),
      ...(changes.capacity === undefined ? {} : { capacity: changes.capacity }),
      ...(changes.pace === undefined ? {} : { pace: changes.pace }),
      ...(changes.revealedSteps === undefined ? {} : { revealedSteps: changes.revealedSteps }),
      ...(endsAt === undefined ? {} : { endsAt }),
    });
    if (changes.end) await this.end(workshopId);
    else if (changes.capacity !== undefined) await this.admission.admitWaiting(workshopId);
    this.live.changed(workshopId);
    return this.plans.settings(await this.row(workshopId));
  }

  /** A message and/or a preset for one of the workshop's scenarios, to every participant. */
  async broadcast(workshopId: string, message: string | null, preset: { scenarioId: string; values: Record<string, ParameterValue> } | null): Promise<void> {
    const workshop = await this.row(workshopId);
    if (preset && !workshop.scenarioIds.includes(preset.scenarioId)) {
      throw new CommandError("invalid", `scenario ${preset.scenarioId} is not part of this workshop`);
    }
    if (preset) {
      const scenario = (await this.services.scenarios.list()).find((candidate) => candidate.id === preset.scenarioId);
      // Checked as the participant's form would check it: a preset nobody could apply is refused now.
      if (scenario) await this.services.scenarios.notebookCells(preset.scenarioId, preset.values);
    }
    await this.stored.addBroadcast(workshopId, message, preset);
    this.live.changed(workshopId);
  }

  async consoleView(workshopId: string): Promise<WorkshopConsoleView> {
    const workshop = await this.row(workshopId);
    await this.plans.countHeldElsewhere(workshopId);
    const settings = this.plans.settings(workshop);
    const participants = await loadParticipants(
      this.services.roster,
      workshopId,
      settings.scenarioIds,
      { kernelOf: (notebookId) => this.kernels.stateOf(notebookId), online: (userId) => this.live.isOnline(userId), opened: (userId) => this.live.openedNotebook(userId) },
      this.factsCacheOf(workshopId),
    );
    return consoleView({ workshop: settings, participants, broadcasts: await loadBroadcasts(this.services.roster, workshopId), now: new Date() });
  }

  async participantView(userId: string): Promise<ParticipantWorkshopView> {
    const user = await this.stored.participantOf(userId);
    if (!user || user.role !== "participant" || user.workshopId === null) throw new CommandError("not-found", "you are not in a workshop");
    const view = (await this.participantViews(user.workshopId)).get(userId);
    if (!view) throw new CommandError("not-found", "you are not in a workshop");
    return view;
  }

  /** Every participant's view: the workshop's settings and broadcasts, and each one's place in the queue. */
  private async participantViews(workshopId: string): Promise<Map<string, ParticipantWorkshopView>> {
    const settings = this.plans.settings(await this.row(workshopId));
    const participants = await this.stored.participants(workshopId);
    const positions = queuePositions(participants);
    const broadcasts = await loadBroadcasts(this.services.roster, workshopId);
    return new Map(participants.map((participant) => [participant.id, participantView(settings, positions.get(participant.id) ?? null, broadcasts)]));
  }

  async summaryCsv(workshopId: string): Promise<{ fileName: string; csv: string }> {
    const view = await this.consoleView(workshopId);
    const slug = view.workshop.title.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "workshop";
    return { fileName: `${slug}-summary.csv`, csv: classSummaryCsv(view) };
  }

  /** The scenarios a participant's workshop offers (what their scenario list shows). */
  async scenarioIdsOf(workshopId: string): Promise<string[]> {
    return this.stored.scenarioIds(workshopId);
  }


  /** Ends workshops past their end time, and starts admitted participants' kernels when the start is near. */
  startClock(intervalMs = 1_000): void {
    this.clock ??= setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((error: unknown) => this.log("error", `workshop clock: ${errorMessage(error)}`))
        .finally(() => (this.ticking = null));
    }, intervalMs);
    this.clock.unref();
  }

  /**
   * Before the database closes: the clock stops, its tick in progress ends,
   * and the live views stop (a query issued after the close would open a new
   * connection that nothing closes, and the next server's migration waits on it).
   */
  async close(): Promise<void> {
    if (this.clock) clearInterval(this.clock);
    this.clock = null;
    await this.ticking;
    await this.live.close();
  }

  async tick(now = new Date()): Promise<void> {
    for (const workshopId of await this.stored.dueToEnd(now)) await this.end(workshopId);
    const starting = await this.stored.startingBy(new Date(now.getTime() + PRESTART_LEAD_MS));
    for (const workshop of starting) await this.kernels.prestart(workshop);
  }

  /** Kernels shut down (GPU slots freed with them), the room closed; participants keep reading their copies. */
  async end(workshopId: string): Promise<void> {
    const ended = await this.stored.markEnded(workshopId);
    const notebookIds = await this.notebookIds(workshopId);
    await this.services.kernels.workshopEnded(workshopId);
    if (ended) this.log("info", `workshop ${workshopId} ended: ${notebookIds.length} notebook(s) read-only, their kernels shut down`);
    this.live.changed(workshopId);
  }

  /** The participants' copies of a workshop. */
  notebookIds(workshopId: string): Promise<string[]> {
    return this.stored.notebookIds(workshopId);
  }

  private factsCacheOf(workshopId: string): FactsCache {
    let cache = this.factsCaches.get(workshopId);
    if (!cache) {
      cache = newFactsCache();
      this.factsCaches.set(workshopId, cache);
    }
    return cache;
  }


  /**
   * A participant may make a copy of one of the workshop's scenarios only
   * once admitted and before the end (workshop-admission.ts).
   */
  requireAdmitted(participantId: string): Promise<void> {
    return this.admission.requireAdmitted(participantId);
  }

  private async row(workshopId: string): Promise<WorkshopRow> {
    const row = await this.stored.find(workshopId);
    if (!row) throw new CommandError("not-found", `workshop ${workshopId} not found`);
    return row;
  }

}

function newJoinCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
}
