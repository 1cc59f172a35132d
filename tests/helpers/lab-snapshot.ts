/**
 * Everything a lab keeps of notebooks, runs, predictions and workshops, read
 * whole from its database in a fixed order, for tests that compare two
 * databases row by row (a backup restored against its source). Each read
 * opens its own client and closes it: a test holding the file open would
 * look like a running lab to restore.
 */
import { openDatabase, type DatabaseOptions, type PrismaClient } from "../../server/persistence";

export async function withLabDatabase<T>(where: Pick<DatabaseOptions, "dataDir" | "url">, body: (prisma: PrismaClient) => Promise<T>): Promise<T> {
  const db = await openDatabase({ ...where, alreadyMigrated: true });
  try {
    return await body(db.prisma);
  } finally {
    await db.close();
  }
}

export type LabSnapshot = Awaited<ReturnType<typeof readSnapshot>>;

export function labSnapshot(where: Pick<DatabaseOptions, "dataDir" | "url">): Promise<LabSnapshot> {
  return withLabDatabase(where, readSnapshot);
}

async function readSnapshot(prisma: PrismaClient) {
  const [notebooks, runs, predictions, workshops] = await Promise.all([
    prisma.notebook.findMany({ orderBy: { id: "asc" }, include: { cells: { orderBy: { id: "asc" } }, shares: { orderBy: { userId: "asc" } } } }),
    prisma.kernelRun.findMany({
      orderBy: { id: "asc" },
      include: { executions: { orderBy: { id: "asc" }, include: { outputs: { orderBy: { seq: "asc" } } } } },
    }),
    prisma.prediction.findMany({ orderBy: [{ notebookId: "asc" }, { questionId: "asc" }, { userId: "asc" }] }),
    prisma.workshop.findMany({
      orderBy: { id: "asc" },
      include: {
        participants: { orderBy: { id: "asc" }, select: { id: true, name: true, email: true, role: true, waitingSince: true, removedAt: true, createdAt: true } },
        broadcasts: { orderBy: { id: "asc" } },
      },
    }),
  ]);
  return { notebooks, runs, predictions, workshops };
}
