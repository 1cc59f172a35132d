/**
 * Workshops, as far as accounts need them: a facilitator makes one from
 * scenarios and gets a join code; a participant who joins gets their own
 * copy of each scenario, owned by them and filed under the workshop (its
 * facilitator sees it). The facilitator console builds on this.
 */
import { randomInt } from "node:crypto";
import { z } from "zod";
import { CommandError } from "../errors";
import type { WorkshopView } from "../core/protocol/accounts-model";
import type { PrismaClient } from "../persistence";
import type { NotebookCatalog } from "../notebook/notebook-hub";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";

/** Join codes avoid letters and digits that read alike (0/O, 1/I/L). */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;

export class Workshops {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly catalog: NotebookCatalog,
    private readonly scenarios: ScenarioCatalog,
  ) {}

  async create(facilitatorId: string, title: string, scenarioIds: readonly string[]): Promise<WorkshopView> {
    const known = new Set((await this.scenarios.list()).map((scenario) => scenario.id));
    const unknown = scenarioIds.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new CommandError("not-found", `no scenario ${unknown.join(", ")}`);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const created = await this.prisma.workshop.create({ data: { title, facilitatorId, joinCode: newJoinCode(), scenarioIds: [...new Set(scenarioIds)] }, select: { id: true } });
        return this.view(created.id);
      } catch (error) {
        // A code already taken (unique): draw again; 31^8 makes a second clash vanishingly rare.
        if (attempt >= 3 || !isUniqueClash(error)) throw error;
      }
    }
  }

  async listFor(facilitatorId: string): Promise<WorkshopView[]> {
    const rows = await this.prisma.workshop.findMany({ where: { facilitatorId }, orderBy: { createdAt: "desc" }, select: { id: true } });
    return Promise.all(rows.map((row) => this.view(row.id)));
  }

  /** A new participant's copies of the workshop's scenarios, in the workshop's order. */
  async giveCopies(participantId: string, workshopId: string): Promise<void> {
    const workshop = await this.prisma.workshop.findUniqueOrThrow({ where: { id: workshopId }, select: { scenarioIds: true } });
    const summaries = await this.scenarios.list();
    for (const scenarioId of scenarioIdsOf(workshop.scenarioIds)) {
      const summary = summaries.find((scenario) => scenario.id === scenarioId);
      if (!summary) continue;
      const cells = await this.scenarios.notebookCells(scenarioId, {});
      await this.catalog.createWithCells(participantId, summary.title, cells, workshopId);
    }
  }

  /** The scenarios a participant's workshop offers (what their scenario list shows). */
  async scenarioIdsOf(workshopId: string): Promise<string[]> {
    const workshop = await this.prisma.workshop.findUnique({ where: { id: workshopId }, select: { scenarioIds: true } });
    return workshop ? scenarioIdsOf(workshop.scenarioIds) : [];
  }

  private async view(workshopId: string): Promise<WorkshopView> {
    const row = await this.prisma.workshop.findUniqueOrThrow({
      where: { id: workshopId },
      select: {
        id: true,
        title: true,
        joinCode: true,
        scenarioIds: true,
        closedAt: true,
        createdAt: true,
        participants: {
          where: { removedAt: null },
          orderBy: { createdAt: "asc" },
          select: { id: true, name: true, notebooks: { where: { workshopId, deletedAt: null }, orderBy: { createdAt: "asc" }, select: { id: true, title: true } } },
        },
      },
    });
    return {
      id: row.id,
      title: row.title,
      joinCode: row.joinCode,
      scenarioIds: scenarioIdsOf(row.scenarioIds),
      closedAt: row.closedAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      participants: row.participants,
    };
  }
}

function newJoinCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
}

function scenarioIdsOf(value: unknown): string[] {
  const parsed = z.array(z.string()).safeParse(value);
  return parsed.success ? parsed.data : [];
}

function isUniqueClash(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}
