/**
 * What the access policy needs to know of one notebook for one user
 * (server/auth/access-policy.ts's NotebookFacts), read on every socket
 * command: one prepared statement (sql.ts), not a query compiled per call.
 * Lists of notebooks read theirs in one Prisma query (access-repository.ts).
 */
import type { PrismaClient } from "./generated/client";
import { sqlOf } from "./database";
import { integer, textOrNull } from "./run-writes";

export interface NotebookAccessRow {
  ownerId: string;
  workshopId: string | null;
  workshopFacilitatorId: string | null;
  workshopEnded: boolean;
  /** What the owner shared with this user, as stored ("read", "run"), or null. */
  share: string | null;
}

const FACTS = `SELECT n."ownerId", n."workshopId", w."facilitatorId", w."endedAt" IS NOT NULL AS "ended", s."access"
  FROM "Notebook" n
  LEFT JOIN "Workshop" w ON w."id" = n."workshopId"
  LEFT JOIN "NotebookShare" s ON s."notebookId" = n."id" AND s."userId" = ?
  WHERE n."id" = ?`;

/** The notebook's facts as `userId` sees them; null when there is no such notebook. */
export async function notebookAccessRow(prisma: PrismaClient, notebookId: string, userId: string): Promise<NotebookAccessRow | null> {
  const [row] = await sqlOf(prisma).all(FACTS, [userId, notebookId]);
  if (!row) return null;
  const ownerId = textOrNull(row, "ownerId");
  if (ownerId === null) return null;
  // SQLite answers 0 or 1, PostgreSQL a boolean.
  const ended = row.ended === true || row.ended === 1;
  return { ownerId, workshopId: textOrNull(row, "workshopId"), workshopFacilitatorId: textOrNull(row, "facilitatorId"), workshopEnded: ended, share: textOrNull(row, "access") };
}

/** A participant's notebook's workshop pace (led: only the revealed steps run); null when it belongs to no workshop. Read on every execute of a participant. */
export async function workshopPaceOf(prisma: PrismaClient, notebookId: string): Promise<{ pace: string; revealedSteps: number } | null> {
  const [row] = await sqlOf(prisma).all(`SELECT w."pace", w."revealedSteps" FROM "Notebook" n JOIN "Workshop" w ON w."id" = n."workshopId" WHERE n."id" = ?`, [notebookId]);
  const pace = row ? textOrNull(row, "pace") : null;
  return row && pace !== null ? { pace, revealedSteps: integer(row, "revealedSteps") } : null;
}
