/**
 * How a run ends, and what a server finds of runs the last one left
 * running: every open execution closed with the status the run's end
 * implies (at the last thing the lab heard from it when the server was cut
 * off), the cell's stored outputs rebuilt from the log, and the runs a host
 * agent may still hold, with what a takeover needs to go on.
 */
import type { CellOutput } from "../core/protocol/notebook-model";
import { Prisma, type PrismaClient } from "./generated/client";
import { lastRunJson, outputsJson } from "./cell-rows";
import { foldOutputs, liveTailOutputs, outputSelect, runSelect, toSequencedOutput } from "./run-rows";
import type { EndedRunStatus, LastRunStatus } from "./types";

type Tx = Prisma.TransactionClient;
type RunRow = Prisma.KernelRunGetPayload<{ select: typeof runSelect }>;

/** A run whose kernel a host agent may still be running: a restarted server takes it over. */
export interface DetachedRun {
  id: string;
  notebookId: string;
  hostId: string;
  agentKernelId: string;
  /** Everything derived from the kernel's output up to here is stored. */
  agentSeq: number;
  kernelInfo: unknown;
  /** The execution that was running, with the outputs stored so far (the live tail folded in). */
  running: { id: string; cellId: string; outputs: CellOutput[]; executionCount: number | null; startedAt: Date | null } | null;
  /** Executions queued behind it, in order, with the code each was asked to run: the next server runs them. */
  queued: Array<{ id: string; cellId: string; source: string }>;
}

const RUNNING_EXECUTION_END: Record<EndedRunStatus, LastRunStatus> = {
  finished: "aborted",
  interrupted: "interrupted",
  died: "kernel-died",
};

/**
 * `at`: when the run ended. A run cut off by a crash of the lab server
 * (`at: "last-heard"`) ends at the last thing the lab heard from it, each of
 * its running executions at its own last-heard time, not at the next start.
 */
export async function endRun(
  tx: Tx,
  run: RunRow,
  status: EndedRunStatus,
  exitReason: string | null,
  at: Date | "last-heard",
): Promise<RunRow> {
  const running = await tx.cellExecution.findMany({
    where: { runId: run.id, status: "running" },
    select: { id: true, cellId: true, startedAt: true, queuedAt: true, executionCount: true, lastHeardAt: true, liveTail: true },
  });
  const executionStatus = RUNNING_EXECUTION_END[status];
  let runEnd = at === "last-heard" ? await lastHeard(tx, run) : at;
  for (const execution of running) {
    const started = execution.startedAt ?? execution.queuedAt;
    const endedAt = at === "last-heard" ? (execution.lastHeardAt ?? started) : at;
    if (endedAt > runEnd) runEnd = endedAt;
    const durationMs = endedAt.getTime() - started.getTime();
    await tx.cellExecution.update({ where: { id: execution.id }, data: { status: executionStatus, endedAt, durationMs, liveTail: Prisma.DbNull }, select: { id: true } });
    const records = await tx.cellOutput.findMany({ where: { executionId: execution.id }, orderBy: { seq: "asc" }, select: outputSelect });
    const outputs = foldOutputs([...records.map((record) => toSequencedOutput(record).output), ...liveTailOutputs(execution.liveTail)]);
    await tx.cell.updateMany({
      where: { notebookId: run.notebookId, id: execution.cellId },
      data: {
        outputs: outputsJson(outputs),
        executionCount: execution.executionCount,
        lastRun: lastRunJson({ status: executionStatus, durationMs }),
      },
    });
  }
  // Queued ones never ran: aborted, in no time.
  await tx.cellExecution.updateMany({ where: { runId: run.id, status: "queued" }, data: { status: "aborted", endedAt: runEnd, durationMs: 0 } });
  return tx.kernelRun.update({ where: { id: run.id }, data: { status, exitReason, endedAt: runEnd }, select: runSelect });
}

/** The latest moment the lab knew a run to be alive: its start, or any execution's start, end or last output. */
async function lastHeard(tx: Tx, run: RunRow): Promise<Date> {
  const latest = await tx.cellExecution.aggregate({ where: { runId: run.id }, _max: { lastHeardAt: true, startedAt: true, endedAt: true } });
  const candidates = [run.startedAt, latest._max.lastHeardAt, latest._max.startedAt, latest._max.endedAt].filter((date): date is Date => date !== null);
  return new Date(Math.max(...candidates.map((date) => date.getTime())));
}


/** Runs left "running" whose kernels a host agent owns (of one notebook, or all): candidates for a takeover. */
export async function detachedRuns(prisma: PrismaClient, notebookId?: string): Promise<DetachedRun[]> {
  const rows = await prisma.kernelRun.findMany({
    where: { status: "running", agentKernelId: { not: null }, hostId: { not: null }, ...(notebookId !== undefined ? { notebookId } : {}) },
    select: { id: true, notebookId: true, hostId: true, agentKernelId: true, agentSeq: true, kernelInfo: true },
    orderBy: { startedAt: "asc" },
  });
  const runs: DetachedRun[] = [];
  for (const row of rows) {
    const execution = await prisma.cellExecution.findFirst({
      where: { runId: row.id, status: "running" },
      select: { id: true, cellId: true, executionCount: true, liveTail: true, startedAt: true },
    });
    let running: DetachedRun["running"] = null;
    if (execution) {
      const records = await prisma.cellOutput.findMany({ where: { executionId: execution.id }, orderBy: { seq: "asc" }, select: outputSelect });
      const outputs = foldOutputs([...records.map((record) => toSequencedOutput(record).output), ...liveTailOutputs(execution.liveTail)]);
      running = { id: execution.id, cellId: execution.cellId, outputs, executionCount: execution.executionCount, startedAt: execution.startedAt };
    }
    const queued = await prisma.cellExecution.findMany({
      where: { runId: row.id, status: "queued" },
      orderBy: [{ queuedAt: "asc" }, { id: "asc" }],
      select: { id: true, cellId: true, source: true },
    });
    runs.push({ id: row.id, notebookId: row.notebookId, hostId: row.hostId!, agentKernelId: row.agentKernelId!, agentSeq: row.agentSeq, kernelInfo: row.kernelInfo, running, queued });
  }
  return runs;
}
