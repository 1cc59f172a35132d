/**
 * Workshops: a facilitator makes one from scenarios, with a start and an
 * end, a resource plan and a join code; participants join by name, are
 * admitted up to the plan's capacity (later arrivals wait in a queue with
 * their place), and get their own copy of each scenario with a kernel
 * started ahead of the start time. The facilitator's console view and each
 * participant's view are recomputed on every change and pushed live
 * (workshop-live.ts). At the end time kernels shut down and the copies turn
 * read-only.
 */
import { randomInt } from "node:crypto";
import { CommandError } from "../errors";
import type { WorkshopView } from "../core/protocol/accounts-model";
import type { ParameterValue } from "../core/protocol/notebook-model";
import { WORKSHOP_PACES, type ParticipantKernelState, type ParticipantWorkshopView, type WorkshopConsoleView, type WorkshopPace, type WorkshopSettings } from "../core/protocol/workshop-model";
import { hiddenCells } from "../core/notebook/workshop-steps";
import type { WorkshopRepository, WorkshopRow } from "../persistence/workshop-repository";
import type { WorkshopRosterRepository } from "../persistence/workshop-roster-repository";
import { DrivenElsewhere } from "../cluster/driven-elsewhere";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import { consoleView, queuePositions } from "./console-view";
import { classSummaryCsv } from "./class-summary";
import { loadBroadcasts, loadParticipants, newFactsCache, type FactsCache } from "./workshop-facts";
import { WorkshopLive, type WorkshopPush } from "./workshop-live";
import { workshopSizing } from "./sizing";

/** Join codes avoid letters and digits that read alike (0/O, 1/I/L). */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;
/** Participants' kernels start this long before the start time. */
export const PRESTART_LEAD_MS = 10 * 60_000;
export const DEFAULT_CAPACITY = 60;
export const WORKSHOP_ENDED_REASON = "the workshop ended: its kernels were shut down and its GPU slots freed";

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

export class Workshops {
  /** Who is connected, the console's and participants' pushes (set once the socket server exists). */
  readonly live: WorkshopLive;
  /** Admission decisions one at a time per workshop: concurrent joins never pass the capacity. */
  private admissions = new Map<string, Promise<unknown>>();
  /** Copies whose kernel this server has asked to start ahead of time. */
  private readonly prestarted = new Set<string>();
  private clock: NodeJS.Timeout | null = null;
  /** The clock's tick in progress: closing waits for it, so no query outlives the database. */
  private ticking: Promise<void> | null = null;
  /** Parsed verdict reports and questions per workshop, re-read only when their cell changed. */
  private readonly factsCaches = new Map<string, FactsCache>();
  /** The most DDP ranks one step of each scenario starts (its default device count), read once from the catalog. */
  private readonly ranksOf = new Map<string, number>();
  /** Admitted participants of other running workshops, per workshop, as of the last view: kernels they hold. */
  private readonly heldElsewhere = new Map<string, number>();

  constructor(
    private readonly stored: WorkshopRepository,
    private readonly roster: WorkshopRosterRepository,
    private readonly hub: NotebookHub,
    private readonly scenarios: ScenarioCatalog,
    private readonly log: (level: "info" | "warning" | "error", message: string) => void = () => undefined,
  ) {
    this.live = new WorkshopLive(
      stored,
      { console: (workshopId) => this.consoleView(workshopId), participants: (workshopId) => this.participantViews(workshopId) },
      (message) => this.log("error", message),
    );
  }

  attach(push: WorkshopPush): void {
    this.live.attach(push);
  }

  async create(facilitatorId: string, title: string, scenarioIds: readonly string[], options: WorkshopOptions = {}): Promise<WorkshopView> {
    const known = new Set((await this.scenarios.list()).map((scenario) => scenario.id));
    const unknown = scenarioIds.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new CommandError("not-found", `no scenario ${unknown.join(", ")}`);
    const startsAt = options.startsAt ? new Date(options.startsAt) : null;
    const endsAt = options.endsAt ? new Date(options.endsAt) : null;
    if (startsAt && endsAt && endsAt <= startsAt) throw new CommandError("invalid", "the end time must be after the start time");
    if (endsAt && endsAt.getTime() <= Date.now()) throw new CommandError("invalid", "the end time is already past");
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    const gpus = options.gpusPerParticipant ?? 0;
    const hostId = this.checkPlan(options.hostId ?? null, gpus, capacity);
    await this.learnRanks(scenarioIds);
    // A code already taken (unique) is drawn again.
    const id = await this.stored.create({ title, facilitatorId, scenarioIds: [...new Set(scenarioIds)], startsAt, endsAt, capacity, hostId, gpusPerParticipant: gpus, pace: options.pace ?? "self" }, newJoinCode);
    return this.view(id);
  }

  async listFor(facilitatorId: string): Promise<WorkshopView[]> {
    const rows = await this.stored.listFor(facilitatorId);
    await this.learnRanks(rows.flatMap((row) => row.scenarioIds));
    return Promise.all(rows.map((row) => this.view(row.id)));
  }

  /**
   * A participant who just joined: admitted while the workshop has room (their
   * copies made, their kernel started when the start is near), else queued.
   */
  async arrived(workshopId: string): Promise<void> {
    // A new participant arrives in the queue (since they joined); seats go first come, first served.
    await this.admitWaiting(workshopId);
    this.live.changed(workshopId);
  }

  async update(workshopId: string, changes: WorkshopChanges): Promise<WorkshopSettings> {
    const workshop = await this.row(workshopId);
    if (workshop.endedAt !== null && (changes.end === undefined || Object.keys(changes).length > 1)) {
      throw new CommandError("invalid", "this workshop has ended: nothing about it can change");
    }
    if (changes.capacity !== undefined) this.checkPlan(workshop.hostId, workshop.gpusPerParticipant, changes.capacity);
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
    else if (changes.capacity !== undefined) await this.admitWaiting(workshopId);
    this.live.changed(workshopId);
    return this.settings(await this.row(workshopId));
  }

  /** A message and/or a preset for one of the workshop's scenarios, to every participant. */
  async broadcast(workshopId: string, message: string | null, preset: { scenarioId: string; values: Record<string, ParameterValue> } | null): Promise<void> {
    const workshop = await this.row(workshopId);
    if (preset && !workshop.scenarioIds.includes(preset.scenarioId)) {
      throw new CommandError("invalid", `scenario ${preset.scenarioId} is not part of this workshop`);
    }
    if (preset) {
      const scenario = (await this.scenarios.list()).find((candidate) => candidate.id === preset.scenarioId);
      // Checked as the participant's form would check it: a preset nobody could apply is refused now.
      if (scenario) await this.scenarios.notebookCells(preset.scenarioId, preset.values);
    }
    await this.stored.addBroadcast(workshopId, message, preset);
    this.live.changed(workshopId);
  }

  async consoleView(workshopId: string): Promise<WorkshopConsoleView> {
    const workshop = await this.row(workshopId);
    await this.countHeldElsewhere(workshopId);
    const settings = this.settings(workshop);
    const participants = await loadParticipants(
      this.roster,
      workshopId,
      settings.scenarioIds,
      { kernelOf: (notebookId) => this.kernelOf(notebookId), online: (userId) => this.live.isOnline(userId), opened: (userId) => this.live.openedNotebook(userId) },
      this.factsCacheOf(workshopId),
    );
    return consoleView({ workshop: settings, participants, broadcasts: await loadBroadcasts(this.roster, workshopId), now: new Date() });
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
    const settings = this.settings(await this.row(workshopId));
    const participants = await this.stored.participants(workshopId);
    const positions = queuePositions(participants);
    const broadcasts = await loadBroadcasts(this.roster, workshopId);
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

  /**
   * A participant may run only the steps revealed so far when the workshop is
   * led by its facilitator; the refusal says so.
   */
  async checkRevealed(notebookId: string, cells: Parameters<typeof hiddenCells>[0], cellIds: readonly string[]): Promise<void> {
    // One prepared statement: this runs on every execute of every participant.
    const workshop = await this.stored.paceOf(notebookId);
    if (!workshop || workshop.pace !== "led") return;
    const hidden = hiddenCells(cells, workshop.revealedSteps);
    if (cellIds.some((id) => hidden.has(id))) throw new CommandError("forbidden", "your facilitator has not revealed this step yet");
  }

  /** Ends workshops past their end time, and starts admitted participants' kernels when the start is near. */
  startClock(intervalMs = 1_000): void {
    this.clock ??= setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.tick()
        .catch((error: unknown) => this.log("error", `workshop clock: ${error instanceof Error ? error.message : String(error)}`))
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
    for (const workshop of starting) await this.prestart(workshop);
  }

  /** Kernels shut down (GPU slots freed with them), the room closed; participants keep reading their copies. */
  async end(workshopId: string): Promise<void> {
    const ended = await this.stored.markEnded(workshopId);
    const notebookIds = await this.notebookIds(workshopId);
    await this.endKernels(workshopId);
    if (ended) this.log("info", `workshop ${workshopId} ended: ${notebookIds.length} notebook(s) read-only, their kernels shut down`);
    this.live.changed(workshopId);
  }

  /** The participants' copies of a workshop. */
  notebookIds(workshopId: string): Promise<string[]> {
    return this.stored.notebookIds(workshopId);
  }

  /** Shuts down the kernels of the workshop's copies that this server drives. */
  async endLocalKernels(workshopId: string): Promise<void> {
    for (const notebookId of await this.notebookIds(workshopId)) {
      if (await this.hub.get(notebookId)) await this.hub.kernels.shutdown(notebookId, WORKSHOP_ENDED_REASON);
    }
  }

  /** With several lab servers, the kernels of an ended workshop are shut down on each (cluster/lab-cluster.ts). */
  endKernelsWith(endKernels: (workshopId: string) => Promise<void>): void {
    this.endKernels = endKernels;
  }

  private endKernels: (workshopId: string) => Promise<void> = (workshopId) => this.endLocalKernels(workshopId);

  private factsCacheOf(workshopId: string): FactsCache {
    let cache = this.factsCaches.get(workshopId);
    if (!cache) {
      cache = newFactsCache();
      this.factsCaches.set(workshopId, cache);
    }
    return cache;
  }

  private async kernelOf(notebookId: string): Promise<ParticipantKernelState> {
    const runtime = await this.hub.get(notebookId);
    if (!runtime) return "not-started";
    const status = runtime.kernel.status;
    switch (status.state) {
      case "not-started":
        return "not-started";
      case "starting":
      case "restarting":
        return "starting";
      case "idle":
        return "idle";
      case "busy":
      case "interrupting":
        return runtime.doc.cells.some((cell) => cell.runState === "running" && cell.outputs.some((output) => output.kind === "hang")) ? "hung" : "busy";
      case "dead":
        return "dead";
      case "refused":
        // No GPU free for it now: it waits for a retry, as a participant in the admission queue waits.
        return "waiting";
      case "shutdown":
        return "shutdown";
    }
  }

  /** An admitted participant's copies, and their kernel when the start is near. */
  private async settle(participantId: string, workshop: WorkshopRow): Promise<void> {
    await this.giveCopies(participantId, workshop);
    if (workshop.startsAt === null || workshop.startsAt.getTime() - PRESTART_LEAD_MS <= Date.now()) void this.prestart(workshop);
  }

  /** Admits the longest-waiting participants while there is room (seats decided one workshop change at a time; copies made after). */
  private async admitWaiting(workshopId: string): Promise<void> {
    const { workshop, admitted } = await this.serially(workshopId, async () => {
      const row = await this.row(workshopId);
      const room = row.capacity - (await this.admittedCount(workshopId));
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

  /** Starts the kernel of each admitted participant's first copy that never had one. */
  private async prestart(workshop: WorkshopRow): Promise<void> {
    const firstScenario = workshop.scenarioIds[0];
    if (firstScenario === undefined) return;
    const copies = await this.stored.neverRunCopies(workshop.id, firstScenario);
    const first = new Map<string, string>();
    for (const copy of copies) if (copy.hasFirstStep && !first.has(copy.ownerId)) first.set(copy.ownerId, copy.id);
    for (const notebookId of first.values()) {
      if (this.prestarted.has(notebookId)) continue;
      this.prestarted.add(notebookId);
      void this.hub
        .open(notebookId)
        .then((runtime) => runtime.startKernel())
        .then(
          () => this.live.consoleChanged(workshop.id),
          (error: unknown) => {
            // With several lab servers, each one's clock tries: the server that drives the notebook starts it.
            if (error instanceof DrivenElsewhere) return;
            this.log("warning", `workshop ${workshop.id}: could not start the kernel of notebook ${notebookId} ahead of time: ${error instanceof Error ? error.message : String(error)}`);
          },
        );
    }
  }

  private checkPlan(hostId: string | null, gpus: number, capacity: number): string | null {
    const hosts = this.hub.hosts;
    if (hostId !== null && !hosts.ids().includes(hostId)) throw new CommandError("invalid", `no host "${hostId}" (the lab's hosts: ${hosts.ids().join(", ")})`);
    const have = hosts.gpuCount(hostId ?? hosts.defaultHost);
    if (gpus > 0 && have !== null && gpus * capacity > have) {
      throw new CommandError("invalid", `host ${hostId ?? hosts.defaultHost} has ${have} GPU(s): ${gpus} each fits ${Math.floor(have / gpus)} participant(s), not ${capacity}`);
    }
    return hostId;
  }

  private settings(row: WorkshopRow): WorkshopSettings {
    const pace = (WORKSHOP_PACES as readonly string[]).includes(row.pace) ? (row.pace as WorkshopPace) : "self";
    const host = row.hostId ?? this.hub.hosts.defaultHost;
    const resources =
      row.gpusPerParticipant > 0
        ? `${row.gpusPerParticipant} GPU${row.gpusPerParticipant === 1 ? "" : "s"} each on host ${host}, for up to ${row.capacity} participants`
        : `CPU emulation on host ${host} (no GPU per participant), for up to ${row.capacity} participants`;
    return {
      id: row.id,
      title: row.title,
      joinCode: row.joinCode,
      scenarioIds: row.scenarioIds,
      startsAt: row.startsAt?.toISOString() ?? null,
      endsAt: row.endsAt?.toISOString() ?? null,
      closedAt: row.closedAt?.toISOString() ?? null,
      endedAt: row.endedAt?.toISOString() ?? null,
      pace,
      revealedSteps: row.revealedSteps,
      plan: { hostId: row.hostId, gpusPerParticipant: row.gpusPerParticipant, capacity: row.capacity },
      resources,
      sizing: this.sizing(row),
    };
  }

  /** Whether the lab holds this workshop's plan (the facilitator's: participants are never sent it). */
  private sizing(row: Pick<WorkshopRow, "id" | "capacity" | "hostId" | "gpusPerParticipant" | "scenarioIds">): WorkshopSettings["sizing"] {
    const limits = this.hub.kernels.limits;
    const hostId = row.hostId ?? this.hub.hosts.defaultHost;
    const scenarioIds = row.scenarioIds;
    return workshopSizing({
      capacity: row.capacity,
      kernels: {
        max: limits.maxKernels,
        fromSetting: limits.capacity?.fromSetting ?? true,
        why: limits.capacity?.why ?? `${limits.maxKernels} kernels at once`,
        machine: limits.capacity?.machine ?? null,
      },
      heldElsewhere: this.heldElsewhere.get(row.id) ?? 0,
      scenarios: scenarioIds.length,
      ranksPerStep: Math.max(0, ...scenarioIds.map((id) => this.ranksOf.get(id) ?? 0)),
      // The lab's own machine is the host "local" (README, GPU hosts).
      onThisMachine: hostId === "local" || this.hub.hosts.ids().length === 1,
      hostId,
      gpusPerParticipant: row.gpusPerParticipant,
      hostGpus: this.hub.hosts.gpuCount(hostId),
    });
  }

  /** The device count of each scenario's form (DDP steps start that many rank processes), read once per scenario. */
  private async learnRanks(scenarioIds: readonly string[]): Promise<void> {
    for (const id of new Set(scenarioIds)) {
      if (this.ranksOf.has(id)) continue;
      try {
        const cells = await this.scenarios.notebookCells(id, {});
        const values = cells.find((cell) => cell.template !== null)?.template?.parameters ?? {};
        const ranks = [values.devices, values.world_size].filter((value): value is number => typeof value === "number");
        this.ranksOf.set(id, Math.max(0, ...ranks));
      } catch {
        // An unknown scenario has no steps to size; create() refuses it with its own message.
      }
    }
  }

  /** Admitted participants of the lab's other running workshops: each holds a kernel started ahead. */
  private async countHeldElsewhere(workshopId: string): Promise<void> {
    const held = await this.stored.seatedElsewhere(workshopId);
    this.heldElsewhere.set(workshopId, held);
  }

  private async row(workshopId: string): Promise<WorkshopRow> {
    const row = await this.stored.find(workshopId);
    if (!row) throw new CommandError("not-found", `workshop ${workshopId} not found`);
    return row;
  }

  private admittedCount(workshopId: string): Promise<number> {
    return this.stored.seatedCount(workshopId);
  }

  private serially<T>(workshopId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.admissions.get(workshopId) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.admissions.set(workshopId, next.catch(() => undefined));
    return next;
  }

  private async view(workshopId: string): Promise<WorkshopView> {
    const row = await this.stored.listing(workshopId);
    return {
      id: row.id,
      title: row.title,
      joinCode: row.joinCode,
      scenarioIds: row.scenarioIds,
      closedAt: row.closedAt?.toISOString() ?? null,
      endedAt: row.endedAt?.toISOString() ?? null,
      startsAt: row.startsAt?.toISOString() ?? null,
      endsAt: row.endsAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      pace: row.pace === "led" ? "led" : "self",
      capacity: row.capacity,
      sizing: await this.countHeldElsewhere(workshopId).then(() => this.sizing(row)),
      participants: row.participants.map(({ waitingSince, ...participant }) => ({ ...participant, waiting: waitingSince !== null })),
    };
  }
}

function participantView(settings: WorkshopSettings, queuePosition: number | null, broadcasts: ParticipantWorkshopView["broadcasts"]): ParticipantWorkshopView {
  return {
    id: settings.id,
    title: settings.title,
    state: settings.endedAt !== null ? "ended" : queuePosition !== null ? "waiting" : "admitted",
    queuePosition,
    // Plain words: a participant never needs a setting's name to understand why they wait.
    waitingBecause: queuePosition === null ? null : `the workshop has room for ${settings.plan.capacity} at a time and every place is taken; when your facilitator adds places, the first in the queue go in`,
    startsAt: settings.startsAt,
    endsAt: settings.endsAt,
    pace: settings.pace,
    revealedSteps: settings.revealedSteps,
    resources: settings.resources,
    broadcasts,
  };
}

function newJoinCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
}
