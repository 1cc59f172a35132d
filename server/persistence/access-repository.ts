/**
 * What the access gate (server/auth/access-gate.ts) reads to decide: each
 * notebook's owner, workshop and shares as one user sees them, the notebook
 * an execution belongs to, and owners' names for lists that name a person
 * where they may not name a notebook.
 */
import type { PrismaClient } from "./generated/client";
import { notebookAccessRow, type NotebookAccessRow } from "./access-facts";

/** Whose notebook it is, as the access policy sees a person. */
export interface NotebookOwner {
  id: string;
  name: string;
  role: string;
  workshopId: string | null;
}

export class AccessRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** One notebook's facts for `userId` (one prepared statement: read on every socket command); null when there is no such notebook. */
  notebookFacts(notebookId: string, userId: string): Promise<NotebookAccessRow | null> {
    return notebookAccessRow(this.prisma, notebookId, userId);
  }

  /** The facts of each of these notebooks that exists, for `userId`. */
  async manyFacts(notebookIds: readonly string[], userId: string): Promise<Map<string, NotebookAccessRow>> {
    const rows = await this.prisma.notebook.findMany({
      where: { id: { in: [...notebookIds] } },
      select: {
        id: true,
        ownerId: true,
        workshopId: true,
        workshop: { select: { facilitatorId: true, endedAt: true } },
        shares: { where: { userId }, select: { access: true } },
      },
    });
    return new Map(
      rows.map((row) => [
        row.id,
        {
          ownerId: row.ownerId,
          workshopId: row.workshopId,
          workshopFacilitatorId: row.workshop?.facilitatorId ?? null,
          workshopEnded: (row.workshop?.endedAt ?? null) !== null,
          share: row.shares[0]?.access ?? null,
        },
      ]),
    );
  }

  /**
   * The notebooks a user may possibly read (the policy decides which they
   * do): their own, those shared with them (`shared`), and those of the
   * workshops they run (`facilitated`).
   */
  async candidateNotebooks(userId: string, include: { shared: boolean; facilitated: boolean }): Promise<string[]> {
    const candidates = await this.prisma.notebook.findMany({
      where: {
        OR: [{ ownerId: userId }, ...(include.shared ? [{ shares: { some: { userId } } }] : []), ...(include.facilitated ? [{ workshop: { facilitatorId: userId } }] : [])],
      },
      select: { id: true },
    });
    return candidates.map((row) => row.id);
  }

  /** The notebook an execution belongs to; null when there is no such execution. */
  async notebookOfExecution(executionId: string): Promise<string | null> {
    const found = await this.prisma.cellExecution.findUnique({ where: { id: executionId }, select: { run: { select: { notebookId: true } } } });
    return found?.run.notebookId ?? null;
  }

  /** Each of these notebooks' owner's name (unknown notebooks are absent). */
  async ownerNames(notebookIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.prisma.notebook.findMany({ where: { id: { in: [...notebookIds] } }, select: { id: true, owner: { select: { name: true } } } });
    return new Map(rows.map((row) => [row.id, row.owner.name]));
  }

  /** Whose notebook it is; null when there is no such notebook. */
  async ownerOf(notebookId: string): Promise<NotebookOwner | null> {
    const row = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { owner: { select: { id: true, name: true, role: true, workshopId: true } } } });
    return row?.owner ?? null;
  }
}
