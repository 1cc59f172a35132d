/** Who an owner shared a notebook with, and how far ("read", "run"). */
import type { PrismaClient } from "./generated/client";

export interface StoredShare {
  userId: string;
  name: string;
  email: string;
  /** As stored ("read", "run"). */
  access: string;
}

export class ShareRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** The notebook's shares with users not removed, oldest first. */
  async list(notebookId: string): Promise<StoredShare[]> {
    const rows = await this.prisma.notebookShare.findMany({
      where: { notebookId, user: { removedAt: null } },
      orderBy: { createdAt: "asc" },
      select: { userId: true, access: true, user: { select: { name: true, email: true } } },
    });
    return rows.map((row) => ({ userId: row.userId, name: row.user.name, email: row.user.email, access: row.access }));
  }

  /** Shares the notebook with the user at `access`, or changes how far. */
  async set(notebookId: string, userId: string, access: "read" | "run"): Promise<void> {
    await this.prisma.notebookShare.upsert({ where: { notebookId_userId: { notebookId, userId } }, create: { notebookId, userId, access }, update: { access } });
  }

  async remove(notebookId: string, userId: string): Promise<void> {
    await this.prisma.notebookShare.deleteMany({ where: { notebookId, userId } });
  }
}
