/**
 * What the lab's database holds of the class, read whole for the checker:
 * every execution of the participants' notebooks with its output log, the
 * kernel runs they ran in, the cells as stored, and the predictions. Read
 * with the lab's own client and schemas (a stored output that is not a
 * CellOutput is the lab's problem, and is said).
 */
import { openDatabase, RunRepository, type PrismaClient } from "../../server/persistence";
import { cellOutputSchema } from "../../server/core/protocol/notebook-schemas";
import type { Cell, CellOutput } from "../../server/core/protocol/notebook-model";

export interface StoredExecution {
  id: string;
  runId: string;
  notebookId: string;
  cellId: string;
  source: string;
  status: string;
  queuedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  durationMs: number | null;
  /** The execution's output log, in order (stream chunks as stored). */
  outputs: CellOutput[];
}

export interface StoredRun {
  id: string;
  notebookId: string;
  status: string;
  exitReason: string | null;
  /** The kernel's process id, from the run's kernel info (null when none was stored). */
  kernelPid: number | null;
  startedAt: number;
  endedAt: number | null;
}

export interface StoredCell {
  notebookId: string;
  id: string;
  source: string;
  outputs: CellOutput[];
  executionCount: number | null;
  lastRun: Cell["lastRun"];
  lastExecutionId: string | null;
}

export interface StoredPrediction {
  notebookId: string;
  userId: string;
  questionId: string;
  choice: string;
}

export interface LabRecords {
  executions: StoredExecution[];
  runs: StoredRun[];
  cells: StoredCell[];
  predictions: StoredPrediction[];
  /** Stored values the lab's own schemas refuse. */
  malformed: string[];
}

export async function readLabRecords(databaseUrl: string, notebookIds: readonly string[]): Promise<LabRecords> {
  const db = await openDatabase({ url: databaseUrl, alreadyMigrated: true });
  try {
    return await read(db.prisma, notebookIds);
  } finally {
    await db.close();
  }
}

async function read(prisma: PrismaClient, notebookIds: readonly string[]): Promise<LabRecords> {
  const ids = [...notebookIds];
  const malformed: string[] = [];
  const runRows = await prisma.kernelRun.findMany({
    where: { notebookId: { in: ids } },
    select: { id: true, notebookId: true, status: true, exitReason: true, kernelInfo: true, startedAt: true, endedAt: true },
  });
  const runs: StoredRun[] = runRows.map((row) => ({
    id: row.id,
    notebookId: row.notebookId,
    status: row.status,
    exitReason: row.exitReason,
    kernelPid: pidOf(row.kernelInfo),
    startedAt: row.startedAt.getTime(),
    endedAt: row.endedAt?.getTime() ?? null,
  }));
  const notebookOfRun = new Map(runs.map((run) => [run.id, run.notebookId]));
  const executionRows = await prisma.cellExecution.findMany({
    where: { runId: { in: runs.map((run) => run.id) } },
    orderBy: [{ queuedAt: "asc" }, { id: "asc" }],
    select: { id: true, runId: true, cellId: true, source: true, status: true, queuedAt: true, startedAt: true, endedAt: true, durationMs: true },
  });
  const repository = new RunRepository(prisma);
  const executions: StoredExecution[] = [];
  for (const row of executionRows) {
    let outputs: CellOutput[] = [];
    try {
      outputs = await repository.executionOutputs(row.id);
    } catch (error) {
      malformed.push(`execution ${row.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
    executions.push({
      id: row.id,
      runId: row.runId,
      notebookId: notebookOfRun.get(row.runId)!,
      cellId: row.cellId,
      source: row.source,
      status: row.status,
      queuedAt: row.queuedAt.getTime(),
      startedAt: row.startedAt?.getTime() ?? null,
      endedAt: row.endedAt?.getTime() ?? null,
      durationMs: row.durationMs,
      outputs,
    });
  }
  const cellRows = await prisma.cell.findMany({
    where: { notebookId: { in: ids } },
    select: { notebookId: true, id: true, source: true, outputs: true, executionCount: true, lastRun: true, lastExecutionId: true },
  });
  const cells: StoredCell[] = cellRows.map((row) => {
    const outputs = cellOutputSchema.array().safeParse(row.outputs);
    if (!outputs.success) malformed.push(`cell ${row.id} of ${row.notebookId}: stored outputs are not CellOutputs`);
    return {
      notebookId: row.notebookId,
      id: row.id,
      source: row.source,
      outputs: outputs.success ? outputs.data : [],
      executionCount: row.executionCount,
      lastRun: lastRunOf(row.lastRun),
      lastExecutionId: row.lastExecutionId,
    };
  });
  const predictions = await prisma.prediction.findMany({ where: { notebookId: { in: ids } }, select: { notebookId: true, userId: true, questionId: true, choice: true } });
  return { executions, runs, cells, predictions, malformed };
}

function pidOf(info: unknown): number | null {
  if (typeof info !== "object" || info === null || !("pid" in info)) return null;
  return typeof info.pid === "number" ? info.pid : null;
}

function lastRunOf(value: unknown): Cell["lastRun"] {
  if (typeof value !== "object" || value === null || !("status" in value) || !("durationMs" in value)) return null;
  const { status, durationMs } = value;
  if (typeof durationMs !== "number") return null;
  if (status === "ok" || status === "error" || status === "interrupted" || status === "aborted" || status === "kernel-died") return { status, durationMs };
  return null;
}

/** Removes one whole line from the stored output log (the checker's self-test: a line a client saw, lost). Returns where it was. */
export async function deleteStoredLine(databaseUrl: string, executionId: string, line: string): Promise<string> {
  const db = await openDatabase({ url: databaseUrl, alreadyMigrated: true });
  try {
    const rows = await db.prisma.cellOutput.findMany({ where: { executionId }, orderBy: { seq: "asc" }, select: { notebookId: true, seq: true, payload: true } });
    for (const row of rows) {
      const output = cellOutputSchema.safeParse(row.payload);
      if (!output.success || output.data.kind !== "stream" || !output.data.text.includes(`${line}\n`)) continue;
      const text = output.data.text.replace(`${line}\n`, "");
      await db.prisma.cellOutput.update({ where: { notebookId_seq: { notebookId: row.notebookId, seq: row.seq } }, data: { payload: { ...output.data, text } } });
      return `output ${row.seq} of execution ${executionId}`;
    }
    throw new Error(`no stored output of execution ${executionId} has the line "${line}"`);
  } finally {
    await db.close();
  }
}
