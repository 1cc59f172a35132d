/**
 * Kernel runs, cell executions and their output log. Every output record
 * takes the next number of its notebook's sequence (shared with metrics), in
 * the transaction that writes it, so "everything after seq N" is exact: a
 * reconnecting viewer gets each record once and misses none.
 *
 * Lifecycle the runtime drives:
 *   start → queueExecutions → startExecution → recordProgress… → finishExecution → … → finish
 * and on server start, interruptRunningRuns() closes what the last process left open,
 * ending each cut-off execution at the last thing the lab heard from it.
 */
import { randomUUID } from "node:crypto";
import type { CellOutput } from "../core/protocol/notebook-model";
import { devicePlanSchema, type DevicePlan } from "../core/protocol/kernel-messages";
import { cellOutputSchema } from "../core/protocol/notebook-schemas";
import type { Prisma, PrismaClient } from "./generated/client";
import { checkCellId, checkSource } from "./cell-rows";
import { sqlOf } from "./database";
import { InvalidDataError, NotFoundError } from "./errors";
import { writeGroupCommit, type GroupCommit } from "./group-commit";
import { detachedRuns, endRun, type DetachedRun } from "./run-endings";
import { executionSelect, outputSelect, parseDevicePlans, runSelect, toExecution, toRun, toSequencedOutput } from "./run-rows";
import { finishExecutionRow, insertExecution, insertOutputs, insertRun, pointCellAt, setCellResult, setExecutionProgress, textOrNull, type RunWrite } from "./run-writes";
import type { Sql, SqlRow } from "./sql";
import { liveTailSchema, type EndedRunStatus, type ExecutionSummary, type JsonValue, type LastRunStatus, type LiveTail, type RunSummary, type SequencedOutput } from "./types";

export type { DetachedRun } from "./run-endings";
export type { GroupCommit } from "./group-commit";
export { foldOutputs, parseDevicePlans } from "./run-rows";


export const SERVER_RESTARTED = "server restarted";
const DEFAULT_REPLAY_LIMIT = 10_000;

export interface StartRunInput {
  notebookId: string;
  userId?: string | null;
  host: string;
  deviceMode: string;
  /** A kernel a host agent owns: which host, its id there, and what it said of itself (KernelInfo). */
  agent?: { hostId: string; agentKernelId: string; kernelInfo: JsonValue } | null;
}

export type FinishedExecutionStatus = LastRunStatus;

export interface FinishExecutionInput {
  status: FinishedExecutionStatus;
  /** Default: from startedAt (or queuedAt) to now. */
  durationMs?: number;
  executionCount?: number | null;
  /** What the cell shows now; when given, the cell's stored outputs and last run are updated too. */
  outputs?: CellOutput[];
}

export type ReplayScope = { notebookId: string } | { runId: string };

/** What one commit of a running execution writes, in one transaction. */
export interface ExecutionProgress {
  /** New records for the output log, in order. */
  outputs: CellOutput[];
  /** The tail viewers are shown past the head budget; null clears it; undefined leaves it. */
  liveTail?: LiveTail | null;
  /** When the lab last heard from the execution; undefined leaves it. */
  heardAt?: Date;
}

export class RunRepository {
  private readonly sql: Sql;

  /** `sql`: the statements' connection (by default Prisma's own; a test may put a failing network between). */
  constructor(
    private readonly prisma: PrismaClient,
    sql?: Sql,
  ) {
    this.sql = sql ?? sqlOf(prisma);
  }

  async start(input: StartRunInput): Promise<RunSummary> {
    const runId = newRunId();
    const at = new Date();
    await this.sql.transaction(async (tx) => {
      if ((await tx.all(`SELECT 1 FROM "Notebook" WHERE "id" = ?`, [input.notebookId])).length === 0) throw new NotFoundError("notebook", input.notebookId);
      if (input.userId && (await tx.all(`SELECT 1 FROM "User" WHERE "id" = ?`, [input.userId])).length === 0) throw new NotFoundError("user", input.userId);
      await insertRun(tx, { runId, notebookId: input.notebookId, userId: input.userId ?? null, host: input.host, deviceMode: input.deviceMode, agent: input.agent ?? null, at });
    });
    return { id: runId, notebookId: input.notebookId, userId: input.userId ?? null, host: input.host, deviceMode: input.deviceMode, status: "running", exitReason: null, startedAt: at, endedAt: null };
  }

  /**
   * The runtime's group commit: everything its kernel's output produced
   * since the last commit, in one transaction (group-commit.ts says how a
   * failed or retried one is stored once).
   */
  async write(writes: readonly RunWrite[], commit?: GroupCommit): Promise<void> {
    await writeGroupCommit(this.sql, writes, commit);
  }

  async get(runId: string): Promise<RunSummary> {
    const row = await this.prisma.kernelRun.findUnique({ where: { id: runId }, select: runSelect });
    if (!row) throw new NotFoundError("run", runId);
    return toRun(row);
  }

  /** The notebook's runs, newest first. */
  async list(notebookId: string, limit = 100): Promise<RunSummary[]> {
    const rows = await this.prisma.kernelRun.findMany({ where: { notebookId }, orderBy: [{ startedAt: "desc" }, { id: "desc" }], take: limit, select: runSelect });
    return rows.map(toRun);
  }

  /**
   * Ends a run and closes its open executions (queued → aborted; running →
   * aborted / interrupted / kernel-died by `status`, with the cell's stored
   * outputs rebuilt from the log). A run that already ended is left as it is.
   */
  async finish(runId: string, end: { status: EndedRunStatus; exitReason?: string | null }): Promise<RunSummary> {
    return this.prisma.$transaction(async (tx) => {
      const run = await tx.kernelRun.findUnique({ where: { id: runId }, select: runSelect });
      if (!run) throw new NotFoundError("run", runId);
      if (run.status !== "running") return toRun(run);
      return toRun(await endRun(tx, run, end.status, end.exitReason ?? null, new Date()));
    });
  }

  /**
   * On server start: every run still "running" belonged to the previous
   * process. Marks them interrupted with `reason`, closes their executions and
   * keeps what their cells had printed.
   */
  async interruptRunningRuns(
    reason = SERVER_RESTARTED,
    { keepAgentRuns = false, notebookId }: { keepAgentRuns?: boolean; /** Only this notebook's (a lab server of several taking one over). */ notebookId?: string } = {},
  ): Promise<RunSummary[]> {
    return this.prisma.$transaction(
      async (tx) => {
        const runs = await tx.kernelRun.findMany({
          where: { status: "running", ...(keepAgentRuns ? { agentKernelId: null } : {}), ...(notebookId !== undefined ? { notebookId } : {}) },
          select: runSelect,
        });
        const ended: RunSummary[] = [];
        for (const run of runs) ended.push(toRun(await endRun(tx, run, "interrupted", reason, "last-heard")));
        return ended;
      },
      { timeout: 60_000 },
    );
  }

  /** Runs left "running" whose kernels a host agent owns (of one notebook, or all): candidates for a takeover. */
  detachedRuns(notebookId?: string): Promise<DetachedRun[]> {
    return detachedRuns(this.prisma, notebookId);
  }

  /** A detached run that cannot be taken over: ended as interrupted at the last thing the lab heard from it. */
  async interruptRun(runId: string, reason: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const run = await tx.kernelRun.findUnique({ where: { id: runId }, select: runSelect });
      if (run && run.status === "running") await endRun(tx, run, "interrupted", reason, "last-heard");
    });
  }

  /**
   * Queues cells to run in this order; returns the execution ids. An `id`
   * chosen by the caller (the runtime names an execution before it is saved,
   * so live metric points can carry it) is kept.
   */
  async queueExecutions(
    runId: string,
    cells: Array<{ cellId: string; source: string; id?: string; template?: { id: string; parameters: Record<string, string | number | boolean> } | null }>,
  ): Promise<string[]> {
    for (const cell of cells) {
      checkCellId(cell.cellId);
      checkSource(cell.source, `cell ${cell.cellId}`);
    }
    return this.sql.transaction(async (tx) => {
      const [run] = await tx.all(`SELECT "status" FROM "KernelRun" WHERE "id" = ?`, [runId]);
      if (!run) throw new NotFoundError("run", runId);
      if (run.status !== "running") throw new InvalidDataError(`run ${runId} has ended (${String(run.status)})`);
      const ids: string[] = [];
      const at = new Date();
      for (const cell of cells) {
        const executionId = cell.id ?? newRunId();
        await insertExecution(tx, { executionId, runId, cellId: cell.cellId, source: cell.source, template: cell.template ?? null, at, status: "queued", startedAt: null });
        ids.push(executionId);
      }
      return ids;
    });
  }

  async startExecution(executionId: string, state: { executionCount?: number | null } = {}): Promise<void> {
    await this.sql.transaction(async (tx) => {
      const [execution] = await tx.all(`SELECT e."status", e."cellId", r."notebookId" FROM "CellExecution" e JOIN "KernelRun" r ON r."id" = e."runId" WHERE e."id" = ?`, [executionId]);
      if (!execution) throw new NotFoundError("execution", executionId);
      if (execution.status !== "queued") throw new InvalidDataError(`execution ${executionId} is ${String(execution.status)}, not queued`);
      const at = tx.time(new Date());
      if (state.executionCount !== undefined) await tx.run(`UPDATE "CellExecution" SET "status" = 'running', "startedAt" = ?, "executionCount" = ? WHERE "id" = ?`, [at, state.executionCount, executionId]);
      else await tx.run(`UPDATE "CellExecution" SET "status" = 'running', "startedAt" = ? WHERE "id" = ?`, [at, executionId]);
      await pointCellAt(tx, text(execution, "notebookId"), text(execution, "cellId"), executionId);
    });
  }

  async finishExecution(executionId: string, input: FinishExecutionInput): Promise<void> {
    const execution = await this.prisma.cellExecution.findUnique({
      where: { id: executionId },
      select: { cellId: true, queuedAt: true, startedAt: true, executionCount: true, run: { select: { notebookId: true } } },
    });
    if (!execution) throw new NotFoundError("execution", executionId);
    const at = new Date();
    const durationMs = input.durationMs ?? at.getTime() - (execution.startedAt ?? execution.queuedAt).getTime();
    const executionCount = input.executionCount !== undefined ? input.executionCount : execution.executionCount;
    const end = { notebookId: execution.run.notebookId, executionId, cellId: execution.cellId, status: input.status, durationMs, executionCount, at };
    const outputs = input.outputs;
    await this.sql.transaction(async (tx) => {
      if ((await finishExecutionRow(tx, end)) === 0) throw new NotFoundError("execution", executionId);
      if (outputs) await setCellResult(tx, { ...end, outputs });
    });
  }

  async getExecution(executionId: string): Promise<ExecutionSummary> {
    const row = await this.prisma.cellExecution.findUnique({ where: { id: executionId }, select: executionSelect });
    if (!row) throw new NotFoundError("execution", executionId);
    return toExecution(row);
  }

  async listExecutions(runId: string): Promise<ExecutionSummary[]> {
    const rows = await this.prisma.cellExecution.findMany({ where: { runId }, orderBy: [{ queuedAt: "asc" }, { id: "asc" }], select: executionSelect });
    return rows.map(toExecution);
  }

  /** Appends outputs of one execution, numbered in the notebook's sequence; returns them with their seq. */
  async appendOutputs(executionId: string, outputs: CellOutput[]): Promise<SequencedOutput[]> {
    if (outputs.length === 0) return [];
    return this.recordProgress(executionId, { outputs });
  }

  /**
   * One commit of a running execution: its new output records, the tail its
   * viewers see while it floods, and when the lab last heard from it. Written
   * before any viewer is shown them (durable before visible).
   */
  async recordProgress(executionId: string, progress: ExecutionProgress): Promise<SequencedOutput[]> {
    checkProgress(executionId, progress);
    return this.sql.transaction(async (tx) => {
      const [execution] = await tx.all(`SELECT e."runId", e."cellId", r."notebookId" FROM "CellExecution" e JOIN "KernelRun" r ON r."id" = e."runId" WHERE e."id" = ?`, [executionId]);
      if (!execution) throw new NotFoundError("execution", executionId);
      const where = { notebookId: text(execution, "notebookId"), runId: text(execution, "runId"), executionId, cellId: text(execution, "cellId") };
      const records = progress.outputs.length > 0 ? await insertOutputs(tx, where, progress.outputs) : [];
      await setExecutionProgress(tx, executionId, progress);
      return records;
    });
  }

  /** Records the devices the variant `tag` of an execution ran on (one plan per tag; a later one replaces it). */
  async recordDevicePlan(executionId: string, tag: string, plan: DevicePlan): Promise<void> {
    if (!devicePlanSchema.safeParse(plan).success) throw new InvalidDataError(`the device plan of execution ${executionId} is malformed`);
    await this.prisma.$transaction(async (tx) => {
      const row = await tx.cellExecution.findUnique({ where: { id: executionId }, select: { devicePlans: true } });
      if (!row) throw new NotFoundError("execution", executionId);
      const plans = { ...parseDevicePlans(row.devicePlans), [tag]: plan };
      await tx.cellExecution.update({ where: { id: executionId }, data: { devicePlans: plans }, select: { id: true } });
    });
  }

  /** Output records after `afterSeq` in sequence order, at most `limit` (ask again from the last seq for more). */
  async outputsSince(scope: ReplayScope, afterSeq: number, limit = DEFAULT_REPLAY_LIMIT): Promise<SequencedOutput[]> {
    const where: Prisma.CellOutputWhereInput = "runId" in scope ? { runId: scope.runId, seq: { gt: afterSeq } } : { notebookId: scope.notebookId, seq: { gt: afterSeq } };
    const rows = await this.prisma.cellOutput.findMany({ where, orderBy: { seq: "asc" }, take: limit, select: outputSelect });
    return rows.map(toSequencedOutput);
  }

  /** One execution's output records in order (stream chunks not merged: see foldOutputs). */
  async executionOutputs(executionId: string): Promise<CellOutput[]> {
    const rows = await this.prisma.cellOutput.findMany({ where: { executionId }, orderBy: { seq: "asc" }, select: outputSelect });
    return rows.map((row) => toSequencedOutput(row).output);
  }

  /** The notebook's last sequence number: a viewer that loads the notebook now replays from here. */
  async lastSeq(notebookId: string): Promise<number> {
    const row = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { lastSeq: true } });
    if (!row) throw new NotFoundError("notebook", notebookId);
    return row.lastSeq;
  }
}

/** A new run's or execution's id (the lab names them before they are stored). */
export function newRunId(): string {
  return randomUUID().replace(/-/g, "");
}

function text(row: SqlRow, column: string): string {
  const value = textOrNull(row, column);
  if (value === null) throw new InvalidDataError(`column ${column} is empty`);
  return value;
}

function checkProgress(executionId: string, progress: ExecutionProgress): void {
  for (const [index, output] of progress.outputs.entries()) {
    if (!cellOutputSchema.safeParse(output).success) throw new InvalidDataError(`output ${index} of execution ${executionId} is not a valid CellOutput`);
  }
  if (progress.liveTail && !liveTailSchema.safeParse(progress.liveTail).success) throw new InvalidDataError(`the live tail of execution ${executionId} is malformed`);
}

