/**
 * Workshops as stored: the workshop rows (plan, pace, times, join code), its
 * participants' admission (waiting in the queue or seated), their copies and
 * broadcasts. What these mean (capacity checks, views, the clock) is
 * server/workshops; the console's roster reads are workshop-roster-repository.ts.
 */
import { z } from "zod";
import type { PrismaClient } from "./generated/client";
import { workshopPaceOf } from "./access-facts";
import { isUniqueViolation } from "./errors";

/** A workshop's settings as stored (scenarioIds parsed: a malformed list reads as none). */
export interface WorkshopRow {
  id: string;
  title: string;
  joinCode: string;
  scenarioIds: string[];
  closedAt: Date | null;
  startsAt: Date | null;
  endsAt: Date | null;
  endedAt: Date | null;
  pace: string;
  revealedSteps: number;
  capacity: number;
  hostId: string | null;
  gpusPerParticipant: number;
  facilitatorId: string;
}

export interface NewWorkshop {
  title: string;
  facilitatorId: string;
  scenarioIds: string[];
  startsAt: Date | null;
  endsAt: Date | null;
  capacity: number;
  hostId: string | null;
  gpusPerParticipant: number;
  pace: string;
}

/** The settings a facilitator changes; an absent field stays as it is. */
export interface WorkshopUpdate {
  closedAt?: Date | null;
  capacity?: number;
  pace?: string;
  revealedSteps?: number;
  endsAt?: Date | null;
}

/** A workshop as its facilitator's list shows it: the settings and every participant with their copies. */
export interface WorkshopListing {
  id: string;
  title: string;
  joinCode: string;
  scenarioIds: string[];
  closedAt: Date | null;
  endedAt: Date | null;
  startsAt: Date | null;
  endsAt: Date | null;
  createdAt: Date;
  pace: string;
  capacity: number;
  hostId: string | null;
  gpusPerParticipant: number;
  participants: Array<{ id: string; name: string; waitingSince: Date | null; notebooks: Array<{ id: string; title: string }> }>;
}

/** A copy that may get its kernel ahead of the start: `hasFirstStep` when it is a copy of the workshop's first scenario. */
export interface PrestartCandidate {
  id: string;
  ownerId: string;
  hasFirstStep: boolean;
}

const workshopSelect = {
  id: true,
  title: true,
  joinCode: true,
  scenarioIds: true,
  closedAt: true,
  startsAt: true,
  endsAt: true,
  endedAt: true,
  pace: true,
  revealedSteps: true,
  capacity: true,
  hostId: true,
  gpusPerParticipant: true,
  facilitatorId: true,
} as const;

/** How many times a clashing join code is drawn again: 31^8 codes make a second clash vanishingly rare. */
const CODE_ATTEMPTS = 4;

export class WorkshopRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stores a new workshop under a join code drawn by `drawCode`, drawing again when the code is taken (unique); returns its id. */
  async create(workshop: NewWorkshop, drawCode: () => string): Promise<string> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const created = await this.prisma.workshop.create({ data: { ...workshop, joinCode: drawCode() }, select: { id: true } });
        return created.id;
      } catch (error) {
        if (attempt >= CODE_ATTEMPTS - 1 || !isUniqueViolation(error)) throw error;
      }
    }
  }

  async find(workshopId: string): Promise<WorkshopRow | null> {
    const row = await this.prisma.workshop.findUnique({ where: { id: workshopId }, select: workshopSelect });
    return row && { ...row, scenarioIds: scenarioIdsOf(row.scenarioIds) };
  }

  /** A facilitator's workshops, newest first, with their scenarios. */
  async listFor(facilitatorId: string): Promise<Array<{ id: string; scenarioIds: string[] }>> {
    const rows = await this.prisma.workshop.findMany({ where: { facilitatorId }, orderBy: { createdAt: "desc" }, select: { id: true, scenarioIds: true } });
    return rows.map((row) => ({ id: row.id, scenarioIds: scenarioIdsOf(row.scenarioIds) }));
  }

  /** The workshop with its participants (not removed) and their copies, oldest first; throws when there is none. */
  async listing(workshopId: string): Promise<WorkshopListing> {
    const row = await this.prisma.workshop.findUniqueOrThrow({
      where: { id: workshopId },
      select: {
        id: true,
        title: true,
        joinCode: true,
        scenarioIds: true,
        closedAt: true,
        endedAt: true,
        startsAt: true,
        endsAt: true,
        createdAt: true,
        pace: true,
        capacity: true,
        hostId: true,
        gpusPerParticipant: true,
        participants: {
          where: { removedAt: null },
          orderBy: { createdAt: "asc" },
          select: { id: true, name: true, waitingSince: true, notebooks: { where: { workshopId, deletedAt: null }, orderBy: { createdAt: "asc" }, select: { id: true, title: true } } },
        },
      },
    });
    return { ...row, scenarioIds: scenarioIdsOf(row.scenarioIds) };
  }

  async update(workshopId: string, changes: WorkshopUpdate): Promise<void> {
    await this.prisma.workshop.update({ where: { id: workshopId }, data: changes, select: { id: true } });
  }

  /** Marks the workshop ended (and closed) unless it already was; says whether this call ended it. */
  async markEnded(workshopId: string, at = new Date()): Promise<boolean> {
    const ended = await this.prisma.workshop.updateMany({ where: { id: workshopId, endedAt: null }, data: { endedAt: at, closedAt: at } });
    return ended.count > 0;
  }

  /** Workshops not ended whose end time has come. */
  async dueToEnd(now: Date): Promise<string[]> {
    const due = await this.prisma.workshop.findMany({ where: { endedAt: null, endsAt: { lte: now } }, select: { id: true } });
    return due.map((workshop) => workshop.id);
  }

  /** Workshops not ended that start (or started) by `by`, or have no start time. */
  async startingBy(by: Date): Promise<WorkshopRow[]> {
    const rows = await this.prisma.workshop.findMany({ where: { endedAt: null, OR: [{ startsAt: null }, { startsAt: { lte: by } }] }, select: workshopSelect });
    return rows.map((row) => ({ ...row, scenarioIds: scenarioIdsOf(row.scenarioIds) }));
  }

  async addBroadcast(workshopId: string, message: string | null, preset: { scenarioId: string; values: Record<string, string | number | boolean> } | null): Promise<void> {
    await this.prisma.workshopBroadcast.create({ data: { workshopId, message, preset: preset ?? undefined }, select: { id: true } });
  }

  /** The scenarios a workshop offers; none when there is no such workshop. */
  async scenarioIds(workshopId: string): Promise<string[]> {
    const workshop = await this.prisma.workshop.findUnique({ where: { id: workshopId }, select: { scenarioIds: true } });
    return workshop ? scenarioIdsOf(workshop.scenarioIds) : [];
  }

  /** Who runs the workshop; null when there is no such workshop. */
  async facilitatorOf(workshopId: string): Promise<string | null> {
    const found = await this.prisma.workshop.findUnique({ where: { id: workshopId }, select: { facilitatorId: true } });
    return found?.facilitatorId ?? null;
  }

  /** The workshop a join code opens (codes are stored upper-case); null when none. */
  byJoinCode(code: string): Promise<{ id: string; title: string; closedAt: Date | null; endedAt: Date | null } | null> {
    return this.prisma.workshop.findUnique({ where: { joinCode: code.toUpperCase() }, select: { id: true, title: true, closedAt: true, endedAt: true } });
  }

  /** A notebook's workshop pace (one prepared statement: read on every execute of a participant). */
  paceOf(notebookId: string): Promise<{ pace: string; revealedSteps: number } | null> {
    return workshopPaceOf(this.prisma, notebookId);
  }

  /** The workshop a notebook is a copy for; null: none (or no such notebook). */
  async workshopOfNotebook(notebookId: string): Promise<string | null> {
    const row = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { workshopId: true } });
    return row?.workshopId ?? null;
  }

  /** The participants' copies of a workshop (deleted ones too). */
  async notebookIds(workshopId: string): Promise<string[]> {
    const notebooks = await this.prisma.notebook.findMany({ where: { workshopId }, select: { id: true } });
    return notebooks.map((notebook) => notebook.id);
  }

  /** A user's workshop and role; null when there is no such user. */
  participantOf(userId: string): Promise<{ workshopId: string | null; role: string } | null> {
    return this.prisma.user.findUnique({ where: { id: userId }, select: { workshopId: true, role: true } });
  }

  /** The workshop's participants (not removed) and since when each waits for a seat (null: seated). */
  participants(workshopId: string): Promise<Array<{ id: string; waitingSince: Date | null }>> {
    return this.prisma.user.findMany({ where: { workshopId, role: "participant", removedAt: null }, select: { id: true, waitingSince: true } });
  }

  /** Whether a participant still waits for a seat, and whether their workshop ended; null when there is no such user. */
  async admissionOf(participantId: string): Promise<{ waiting: boolean; workshopEnded: boolean } | null> {
    const user = await this.prisma.user.findUnique({ where: { id: participantId }, select: { waitingSince: true, workshop: { select: { endedAt: true } } } });
    return user && { waiting: user.waitingSince !== null, workshopEnded: (user.workshop?.endedAt ?? null) !== null };
  }

  /** Seated participants of the workshop. */
  seatedCount(workshopId: string): Promise<number> {
    return this.prisma.user.count({ where: { workshopId, role: "participant", removedAt: null, waitingSince: null } });
  }

  /** Seats up to `room` of the longest-waiting participants (first come, first served); returns who. */
  async seatLongestWaiting(workshopId: string, room: number): Promise<string[]> {
    const waiting = await this.prisma.user.findMany({
      where: { workshopId, role: "participant", removedAt: null, waitingSince: { not: null } },
      orderBy: [{ waitingSince: "asc" }, { id: "asc" }],
      take: room,
      select: { id: true },
    });
    const ids = waiting.map((participant) => participant.id);
    await this.prisma.user.updateMany({ where: { id: { in: ids } }, data: { waitingSince: null } });
    return ids;
  }

  /** Seated participants of the lab's other running workshops (each holds a kernel started ahead). */
  seatedElsewhere(workshopId: string): Promise<number> {
    return this.prisma.user.count({ where: { role: "participant", removedAt: null, waitingSince: null, workshopId: { not: null }, NOT: { workshopId }, workshop: { endedAt: null } } });
  }

  /** The template ids of a participant's copies of the workshop (one templated cell per copy). */
  async copiedTemplateIds(participantId: string, workshopId: string): Promise<string[]> {
    const owned = await this.prisma.cell.findMany({
      where: { notebook: { ownerId: participantId, workshopId, deletedAt: null }, templateId: { not: null } },
      distinct: ["notebookId"],
      select: { templateId: true },
    });
    return owned.flatMap((cell) => (cell.templateId === null ? [] : [cell.templateId]));
  }

  /** A copy's kernel runs on the workshop plan's host and GPUs. */
  async placeKernel(notebookId: string, hostId: string, gpus: number): Promise<void> {
    await this.prisma.notebook.update({ where: { id: notebookId }, data: { kernelHostId: hostId, kernelGpus: gpus }, select: { id: true } });
  }

  /** Seated participants' copies that never ran, oldest first, each saying whether it is a copy of `firstScenario`. */
  async neverRunCopies(workshopId: string, firstScenario: string): Promise<PrestartCandidate[]> {
    const copies = await this.prisma.notebook.findMany({
      where: { workshopId, deletedAt: null, runs: { none: {} }, owner: { role: "participant", waitingSince: null, removedAt: null } },
      orderBy: { createdAt: "asc" },
      select: { id: true, ownerId: true, cells: { where: { templateId: { startsWith: `${firstScenario}/` } }, select: { id: true }, take: 1 } },
    });
    return copies.map((copy) => ({ id: copy.id, ownerId: copy.ownerId, hasFirstStep: copy.cells.length > 0 }));
  }

  /** Workshops as the operator counts them (active ones; their participants seated or waiting). */
  async counts(now: Date): Promise<{ active: number; admitted: number; waiting: number }> {
    const notEnded = { endedAt: null };
    const participant = { role: "participant", removedAt: null, workshop: { is: notEnded } };
    const [active, admitted, waiting] = await Promise.all([
      this.prisma.workshop.count({ where: { ...notEnded, OR: [{ startsAt: null }, { startsAt: { lte: now } }] } }),
      this.prisma.user.count({ where: { ...participant, waitingSince: null } }),
      this.prisma.user.count({ where: { ...participant, waitingSince: { not: null } } }),
    ]);
    return { active, admitted, waiting };
  }
}

/** The stored scenario list (JSON): not trusted, a malformed one reads as none. */
function scenarioIdsOf(value: unknown): string[] {
  const parsed = z.array(z.string()).safeParse(value);
  return parsed.success ? parsed.data : [];
}
