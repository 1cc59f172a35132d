/**
 * What a workshop's console reads of the class, one query each whatever the
 * class size (server/workshops/workshop-facts.ts puts them together): the
 * participants, their copies, the copies' cells, and only where the caller's
 * cache is stale the cells' questions and outputs (megabytes for a class).
 */
import type { PrismaClient } from "./generated/client";

/** A cell named by its notebook and id. */
export interface CellKey {
  notebookId: string;
  id: string;
}

export interface RosterParticipant {
  id: string;
  name: string;
  createdAt: Date;
  waitingSince: Date | null;
}

export interface RosterCopy {
  id: string;
  title: string;
  ownerId: string;
  updatedAt: Date;
  createdAt: Date;
}

export interface RosterCell extends CellKey {
  position: string;
  kind: string;
  templateId: string | null;
  executionCount: number | null;
  updatedAt: Date;
}

/** A templated code cell that ran: what identifies its last run (`lastRun`: the stored JSON of how it ended). */
export interface RanCell extends CellKey {
  lastExecutionId: string | null;
  lastRun: unknown;
}

export interface StoredBroadcast {
  id: string;
  createdAt: Date;
  message: string | null;
  /** As stored (JSON): validated by the reader. */
  preset: unknown;
}

export class WorkshopRosterRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** The workshop's participants (not removed), in the order they joined. */
  participants(workshopId: string): Promise<RosterParticipant[]> {
    return this.prisma.user.findMany({
      where: { workshopId, role: "participant", removedAt: null },
      orderBy: { createdAt: "asc" },
      select: { id: true, name: true, createdAt: true, waitingSince: true },
    });
  }

  /** These participants' copies (not deleted) for the workshop, oldest first. */
  copies(workshopId: string, ownerIds: readonly string[]): Promise<RosterCopy[]> {
    return this.prisma.notebook.findMany({
      where: { workshopId, deletedAt: null, ownerId: { in: [...ownerIds] } },
      orderBy: { createdAt: "asc" },
      select: { id: true, title: true, ownerId: true, updatedAt: true, createdAt: true },
    });
  }

  /** Every cell of these notebooks, without their sources or outputs. */
  cells(notebookIds: readonly string[]): Promise<RosterCell[]> {
    return this.prisma.cell.findMany({
      where: { notebookId: { in: [...notebookIds] } },
      select: { notebookId: true, id: true, position: true, kind: true, templateId: true, executionCount: true, updatedAt: true },
    });
  }

  /** These cells' template guides (as stored, JSON), with when each cell last changed. */
  guides(cells: readonly CellKey[]): Promise<Array<CellKey & { templateGuide: unknown; updatedAt: Date }>> {
    return this.prisma.cell.findMany({
      where: { OR: cells.map((cell) => ({ notebookId: cell.notebookId, id: cell.id })) },
      select: { notebookId: true, id: true, templateGuide: true, updatedAt: true },
    });
  }

  /** The templated code cells of these notebooks that ran (each may show a verdict report). */
  ranCells(notebookIds: readonly string[]): Promise<RanCell[]> {
    return this.prisma.cell.findMany({
      where: { notebookId: { in: [...notebookIds] }, kind: "code", templateId: { not: null }, executionCount: { not: null }, lastExecutionId: { not: null } },
      select: { notebookId: true, id: true, lastExecutionId: true, lastRun: true },
    });
  }

  /** These cells' outputs (as stored, JSON) with what identifies their last run. */
  outputs(cells: readonly CellKey[]): Promise<Array<RanCell & { outputs: unknown }>> {
    return this.prisma.cell.findMany({
      where: { OR: cells.map((cell) => ({ notebookId: cell.notebookId, id: cell.id })) },
      select: { notebookId: true, id: true, lastExecutionId: true, lastRun: true, outputs: true },
    });
  }

  /** When each of these executions ended (or, not ended, was queued). */
  async executionEnds(executionIds: readonly string[]): Promise<Map<string, Date>> {
    const ended = await this.prisma.cellExecution.findMany({ where: { id: { in: [...executionIds] } }, select: { id: true, endedAt: true, queuedAt: true } });
    return new Map(ended.map((execution) => [execution.id, execution.endedAt ?? execution.queuedAt]));
  }

  /** When a cell of each notebook was last queued to run (notebooks that never ran are absent). */
  async lastQueuedAt(notebookIds: readonly string[]): Promise<Map<string, Date>> {
    const runs = await this.prisma.kernelRun.findMany({
      where: { notebookId: { in: [...notebookIds] } },
      select: { notebookId: true, executions: { orderBy: { queuedAt: "desc" }, take: 1, select: { queuedAt: true } } },
    });
    const lastRunAt = new Map<string, Date>();
    for (const run of runs) {
      const at = run.executions[0]?.queuedAt;
      if (at && (lastRunAt.get(run.notebookId) ?? new Date(0)) < at) lastRunAt.set(run.notebookId, at);
    }
    return lastRunAt;
  }

  /** The predictions committed in these notebooks. */
  predictions(notebookIds: readonly string[]): Promise<Array<{ userId: string; questionId: string; choice: string }>> {
    return this.prisma.prediction.findMany({ where: { notebookId: { in: [...notebookIds] } }, select: { userId: true, questionId: true, choice: true } });
  }

  /** The workshop's last `limit` broadcasts, oldest first. */
  async broadcasts(workshopId: string, limit: number): Promise<StoredBroadcast[]> {
    const rows = await this.prisma.workshopBroadcast.findMany({ where: { workshopId }, orderBy: { createdAt: "desc" }, take: limit });
    return rows.reverse().map((row) => ({ id: row.id, createdAt: row.createdAt, message: row.message, preset: row.preset }));
  }
}
