/**
 * A workshop's plan as people are shown it: its settings in words, whether
 * the lab holds it (sizing, from the kernel cap, the host's GPUs and the
 * other running workshops), the facilitator's list entry and a
 * participant's view. Separate from Workshops, which changes workshops:
 * this only reads and describes them.
 */
import { CommandError } from "../errors";
import type { WorkshopView } from "../core/protocol/accounts-model";
import { WORKSHOP_PACES, type ParticipantWorkshopView, type WorkshopPace, type WorkshopSettings } from "../core/protocol/workshop-model";
import type { WorkshopRepository, WorkshopRow } from "../persistence/workshop-repository";
import type { KernelHosts } from "../notebook/kernel-hosts";
import type { KernelLimits } from "../notebook/kernel-registry";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import { workshopSizing } from "./sizing";

/** What a plan is sized against: the lab's hosts and this server's kernel cap (the notebook hub's). */
export interface PlanFacts {
  hosts: Pick<KernelHosts, "defaultHost" | "ids" | "gpuCount">;
  kernels: { readonly limits: KernelLimits };
}

export class WorkshopPlans {
  /** The most DDP ranks one step of each scenario starts (its default device count), read once from the catalog. */
  private readonly ranksOf = new Map<string, number>();
  /** Admitted participants of other running workshops, per workshop, as of the last view: kernels they hold. */
  private readonly heldElsewhere = new Map<string, number>();

  constructor(
    private readonly stored: Pick<WorkshopRepository, "seatedElsewhere" | "listing">,
    private readonly hub: PlanFacts,
    private readonly scenarios: Pick<ScenarioCatalog, "notebookCells">,
  ) {}

  /** The host the plan names, checked: it exists, and its GPUs fit `gpus` for each of `capacity` participants. */
  checkPlan(hostId: string | null, gpus: number, capacity: number): string | null {
    const hosts = this.hub.hosts;
    if (hostId !== null && !hosts.ids().includes(hostId)) throw new CommandError("invalid", `no host "${hostId}" (the lab's hosts: ${hosts.ids().join(", ")})`);
    const have = hosts.gpuCount(hostId ?? hosts.defaultHost);
    if (gpus > 0 && have !== null && gpus * capacity > have) {
      throw new CommandError("invalid", `host ${hostId ?? hosts.defaultHost} has ${have} GPU(s): ${gpus} each fits ${Math.floor(have / gpus)} participant(s), not ${capacity}`);
    }
    return hostId;
  }

  settings(row: WorkshopRow): WorkshopSettings {
    const pace: WorkshopPace = WORKSHOP_PACES.find((known) => known === row.pace) ?? "self";
    const host = row.hostId ?? this.hub.hosts.defaultHost;
    const resources =
      row.gpusPerParticipant > 0
        ? `${row.gpusPerParticipant} GPU${row.gpusPerParticipant === 1 ? "" : "s"} each on host ${host}, for up to ${row.capacity} participants`
        : `CPU emulation on host ${host} (no GPU per participant), for up to ${row.capacity} participants`;
    return {
      ...identity(row),
      pace,
      revealedSteps: row.revealedSteps,
      plan: { hostId: row.hostId, gpusPerParticipant: row.gpusPerParticipant, capacity: row.capacity },
      resources,
      sizing: this.sizing(row),
    };
  }

  /** The facilitator's list entry of one workshop. */
  async view(workshopId: string): Promise<WorkshopView> {
    const row = await this.stored.listing(workshopId);
    await this.countHeldElsewhere(workshopId);
    return {
      ...identity(row),
      createdAt: row.createdAt.toISOString(),
      pace: row.pace === "led" ? "led" : "self",
      capacity: row.capacity,
      sizing: this.sizing(row),
      participants: row.participants.map(({ waitingSince, ...participant }) => ({ ...participant, waiting: waitingSince !== null })),
    };
  }

  /** Admitted participants of the lab's other running workshops: each holds a kernel started ahead. */
  async countHeldElsewhere(workshopId: string): Promise<void> {
    const held = await this.stored.seatedElsewhere(workshopId);
    this.heldElsewhere.set(workshopId, held);
  }

  /** The device count of each scenario's form (DDP steps start that many rank processes), read once per scenario. */
  async learnRanks(scenarioIds: readonly string[]): Promise<void> {
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
}

type Identified = Pick<WorkshopRow, "id" | "title" | "joinCode" | "scenarioIds" | "startsAt" | "endsAt" | "closedAt" | "endedAt">;

/** What the settings and the list entry both say of a workshop: its names, its scenarios and its times (ISO text; null: not set). */
function identity(row: Identified): Pick<WorkshopSettings, keyof Identified> {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return { id: row.id, title: row.title, joinCode: row.joinCode, scenarioIds: row.scenarioIds, startsAt: iso(row.startsAt), endsAt: iso(row.endsAt), closedAt: iso(row.closedAt), endedAt: iso(row.endedAt) };
}

/** One participant's view: the workshop's settings and broadcasts, and their place in the queue (null: admitted). */
export function participantView(settings: WorkshopSettings, queuePosition: number | null, broadcasts: ParticipantWorkshopView["broadcasts"]): ParticipantWorkshopView {
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
