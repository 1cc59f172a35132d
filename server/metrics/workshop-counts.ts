/**
 * Workshops as the operator counts them, read from the database at a
 * scrape: the same on every lab server of one database (a dashboard takes
 * max() across servers, not sum()).
 */
import type { PrismaClient } from "../persistence";

export interface WorkshopCounts {
  /** Started (or with no start time) and not ended. */
  active: number;
  /** Participants of workshops not ended, in (admitted) or in the admission queue (waiting). */
  admitted: number;
  waiting: number;
}

export async function workshopCounts(prisma: PrismaClient, now = new Date()): Promise<WorkshopCounts> {
  const notEnded = { endedAt: null };
  const participant = { role: "participant", removedAt: null, workshop: { is: notEnded } };
  const [active, admitted, waiting] = await Promise.all([
    prisma.workshop.count({ where: { ...notEnded, OR: [{ startsAt: null }, { startsAt: { lte: now } }] } }),
    prisma.user.count({ where: { ...participant, waitingSince: null } }),
    prisma.user.count({ where: { ...participant, waitingSince: { not: null } } }),
  ]);
  return { active, admitted, waiting };
}
