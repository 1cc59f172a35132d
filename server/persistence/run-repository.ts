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
import { z } from "zod";
import type { CellOutput } from "../core/protocol/notebook-model";
import { Prisma, type PrismaClient } from "./generated/client";
import { checkCellId, checkSource, lastRunJson, outputsJson } from "./cell-rows";
import { sqlOf } from "./database";
import { InvalidDataError, isDatabaseUnreachable, NotDrivingError, NotFoundError } from "./errors";
import { applyRunWrites, finishExecutionRow, insertExecution, insertOutputs, insertRun, pointCellAt, setCellResult, setExecutionProgress, textOrNull, type RunWrite } from "./run-writes";
import type { Sql, SqlQueries, SqlRow } from "./sql";
import { devicePlanSchema, type DevicePlan } from "../core/protocol/kernel-messages";
import { cellOutputSchema } from "../core/protocol/notebook-schemas";
import {
  liveTailSchema,
  EXECUTION_STATUSES,
  RUN_STATUSES,
  type EndedRunStatus,
  type ExecutionStatus,
  type ExecutionSummary,
  type JsonValue,
  type LastRunStatus,
  type LiveTail,
  type RunSummary,
  type SequencedOutput,
} from "./types";
import { errorMessage } from "../core/errors";

type Tx = Prisma.TransactionClient;

export const SERVER_RESTARTED = "server restarted";
const DEFAULT_REPLAY_LIMIT = 10_000;

const runSelect = {
  id: true,
  notebookId: true,
  userId: true,
  host: true,
  deviceMode: true,
  status: true,
  exitReason: true,
  startedAt: true,
  endedAt: true,
} satisfies Prisma.KernelRunSelect;

const executionSelect = {
  id: true,
  runId: true,
  cellId: true,
  source: true,
  executionCount: true,
  status: true,
  queuedAt: true,
  startedAt: true,
  endedAt: true,
  durationMs: true,
} satisfies Prisma.CellExecutionSelect;

const outputSelect = { seq: true, runId: true, executionId: true, cellId: true, payload: true } satisfies Prisma.CellOutputSelect;

export interface StartRunInput {
  notebookId: string;
  userId?: string | null;
  host: string;
  deviceMode: string;
  /** A kernel a host agent owns: which host, its id there, and what it said of itself (KernelInfo). */
  agent?: { hostId: string; agentKernelId: string; kernelInfo: JsonValue } | null;
}

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

/** A group commit's identity (RunRepository.write): which notebook, its id, and whether an attempt came before. */
export interface GroupCommit {
  notebookId: string;
  commitId: string;
  retried: boolean;
  /**
   * With several lab servers on one database: this server's id. The commit is stored only while no
   * other server holds the notebook's driver lease (NotDrivingError otherwise; see checkDriver).
   */
  driver?: string;
}

async function markCommit(tx: SqlQueries, notebookId: string, commitId: string): Promise<void> {
  await tx.run(`UPDATE "Notebook" SET "lastCommitId" = ? WHERE "id" = ?`, [commitId, notebookId]);
}

/**
 * The fence between two servers of one notebook: inside the commit's transaction, the notebook's driver
 * row is read and (PostgreSQL) locked. A server that takes the lease over updates that row, so it either
 * waits for this commit and then reads a read position that includes it, or has already taken it and
 * this commit is refused: what it would store, the new driver replays from the kernel's output once.
 * No row (released at a clean stop, or never clustered) is no other driver. SQLite has one writer at a
 * time, so its read needs no lock.
 */
async function checkDriver(tx: SqlQueries, provider: Sql["provider"], notebookId: string, serverId: string): Promise<void> {
  const lock = provider === "postgresql" ? " FOR UPDATE" : "";
  const rows = await tx.all(`SELECT "serverId" FROM "NotebookDriver" WHERE "notebookId" = ?${lock}`, [notebookId]);
  const holder = rows[0]?.serverId;
  if (typeof holder === "string" && holder !== serverId) throw new NotDrivingError(notebookId, holder);
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
   * since the last commit (runs and executions started, outputs, metrics,
   * executions finished, the read position), in one transaction. These come
   * from the server itself (ids it made, outputs its recorder kept), so they
   * are not checked again here. Should the transaction fail, each write is
   * tried on its own, so one bad write does not take the others with it;
   * the error names those that failed.
   *
   * With `commit`, the transaction also stores its id as the notebook's last
   * commit (each write on its own stores `id/index`), so an attempt after
   * the connection dropped during a COMMIT (`retried`) first reads whether
   * that COMMIT went through and stores only what it did not: a line is
   * never stored twice.
   */
  async write(writes: readonly RunWrite[], commit?: GroupCommit): Promise<void> {
    if (writes.length === 0) return;
    let from = 0;
    if (commit?.retried) {
      const rows = await this.sql.all(`SELECT "lastCommitId" FROM "Notebook" WHERE "id" = ?`, [commit.notebookId]);
      const stored = rows[0]?.lastCommitId;
      if (stored === commit.commitId) return;
      if (typeof stored === "string" && stored.startsWith(`${commit.commitId}/`)) from = Number(stored.slice(commit.commitId.length + 1)) + 1;
    }
    if (from === 0) {
      try {
        const committed = await this.sql.transaction(async (tx) => {
          if (commit?.driver) await checkDriver(tx, this.sql.provider, commit.notebookId, commit.driver);
          const done = await applyRunWrites(tx, writes);
          if (commit) await markCommit(tx, commit.notebookId, commit.commitId);
          return done;
        });
        committed();
        return;
      } catch (error) {
        // Unreachable: the caller's queue tries it again (notebook-persistence.ts), and the check above tells.
        if (writes.length === 1 || isDatabaseUnreachable(error) || error instanceof NotDrivingError) throw error;
      }
    }
    const failed: string[] = [];
    for (const [index, write] of writes.entries()) {
      if (index < from) continue;
      try {
        const committed = await this.sql.transaction(async (tx) => {
          if (commit?.driver) await checkDriver(tx, this.sql.provider, commit.notebookId, commit.driver);
          const done = await applyRunWrites(tx, [write]);
          if (commit) await markCommit(tx, commit.notebookId, `${commit.commitId}/${index}`);
          return done;
        });
        committed();
      } catch (error) {
        if (error instanceof NotDrivingError) throw error;
        // With a commit id, the writes stored so far are marked: the next attempt goes on after them.
        if (commit && isDatabaseUnreachable(error)) throw error;
        // Said in words, not the driver's: some writes are stored now, so this must not read as "unreachable" (retried whole).
        if (isDatabaseUnreachable(error)) failed.push(`${write.kind}: the database went away`);
        else failed.push(`${write.kind}: ${errorMessage(error)}`);
      }
    }
    if (failed.length > 0) throw new Error(`${failed.length} of ${writes.length} writes failed: ${failed.join("; ")}`);
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
  async detachedRuns(notebookId?: string): Promise<DetachedRun[]> {
    const rows = await this.prisma.kernelRun.findMany({
      where: { status: "running", agentKernelId: { not: null }, hostId: { not: null }, ...(notebookId !== undefined ? { notebookId } : {}) },
      select: { id: true, notebookId: true, hostId: true, agentKernelId: true, agentSeq: true, kernelInfo: true },
      orderBy: { startedAt: "asc" },
    });
    const runs: DetachedRun[] = [];
    for (const row of rows) {
      const execution = await this.prisma.cellExecution.findFirst({
        where: { runId: row.id, status: "running" },
        select: { id: true, cellId: true, executionCount: true, liveTail: true, startedAt: true },
      });
      let running: DetachedRun["running"] = null;
      if (execution) {
        const records = await this.prisma.cellOutput.findMany({ where: { executionId: execution.id }, orderBy: { seq: "asc" }, select: outputSelect });
        const outputs = foldOutputs([...records.map((record) => toSequencedOutput(record).output), ...liveTailOutputs(execution.liveTail)]);
        running = { id: execution.id, cellId: execution.cellId, outputs, executionCount: execution.executionCount, startedAt: execution.startedAt };
      }
      const queued = await this.prisma.cellExecution.findMany({
        where: { runId: row.id, status: "queued" },
        orderBy: [{ queuedAt: "asc" }, { id: "asc" }],
        select: { id: true, cellId: true, source: true },
      });
      runs.push({ id: row.id, notebookId: row.notebookId, hostId: row.hostId!, agentKernelId: row.agentKernelId!, agentSeq: row.agentSeq, kernelInfo: row.kernelInfo, running, queued });
    }
    return runs;
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

/** Merges adjacent stream records of the same stream, as a viewer shows them. */
export function foldOutputs(outputs: readonly CellOutput[]): CellOutput[] {
  const folded: CellOutput[] = [];
  for (const output of outputs) {
    const last = folded[folded.length - 1];
    if (output.kind === "stream" && last?.kind === "stream" && last.name === output.name) {
      folded[folded.length - 1] = { ...last, text: last.text + output.text };
    } else {
      folded.push(output);
    }
  }
  return folded;
}

const RUNNING_EXECUTION_END: Record<EndedRunStatus, FinishedExecutionStatus> = {
  finished: "aborted",
  interrupted: "interrupted",
  died: "kernel-died",
};

/**
 * `at`: when the run ended. A run cut off by a crash of the lab server
 * (`at: "last-heard"`) ends at the last thing the lab heard from it, each of
 * its running executions at its own last-heard time, not at the next start.
 */
function checkProgress(executionId: string, progress: ExecutionProgress): void {
  for (const [index, output] of progress.outputs.entries()) {
    if (!cellOutputSchema.safeParse(output).success) throw new InvalidDataError(`output ${index} of execution ${executionId} is not a valid CellOutput`);
  }
  if (progress.liveTail && !liveTailSchema.safeParse(progress.liveTail).success) throw new InvalidDataError(`the live tail of execution ${executionId} is malformed`);
}

async function endRun(
  tx: Tx,
  run: Prisma.KernelRunGetPayload<{ select: typeof runSelect }>,
  status: EndedRunStatus,
  exitReason: string | null,
  at: Date | "last-heard",
): Promise<Prisma.KernelRunGetPayload<{ select: typeof runSelect }>> {
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
async function lastHeard(tx: Tx, run: Prisma.KernelRunGetPayload<{ select: typeof runSelect }>): Promise<Date> {
  const latest = await tx.cellExecution.aggregate({ where: { runId: run.id }, _max: { lastHeardAt: true, startedAt: true, endedAt: true } });
  const candidates = [run.startedAt, latest._max.lastHeardAt, latest._max.startedAt, latest._max.endedAt].filter((date): date is Date => date !== null);
  return new Date(Math.max(...candidates.map((date) => date.getTime())));
}

/** A stored live tail as the outputs a viewer saw: the elided count, then the tail's text. */
function liveTailOutputs(stored: Prisma.JsonValue | null): CellOutput[] {
  const parsed = liveTailSchema.safeParse(stored);
  if (stored === null || !parsed.success) return [];
  const tail: LiveTail = parsed.data;
  const outputs: CellOutput[] = tail.elidedBytes > 0 ? [{ kind: "elided", elidedBytes: tail.elidedBytes }] : [];
  for (const segment of tail.segments) outputs.push({ kind: "stream", name: segment.name, text: segment.text });
  return outputs;
}

function toRun(row: Prisma.KernelRunGetPayload<{ select: typeof runSelect }>): RunSummary {
  const status = RUN_STATUSES.find((candidate) => candidate === row.status);
  if (!status) throw new InvalidDataError(`run ${row.id}: stored status ${JSON.stringify(row.status)} is unknown`);
  return { ...row, status };
}

function toExecution(row: Prisma.CellExecutionGetPayload<{ select: typeof executionSelect }>): ExecutionSummary {
  const status: ExecutionStatus | undefined = EXECUTION_STATUSES.find((candidate) => candidate === row.status);
  if (!status) throw new InvalidDataError(`execution ${row.id}: stored status ${JSON.stringify(row.status)} is unknown`);
  return { ...row, status };
}

function toSequencedOutput(row: Prisma.CellOutputGetPayload<{ select: typeof outputSelect }>): SequencedOutput {
  const parsed = cellOutputSchema.safeParse(row.payload);
  if (!parsed.success) throw new InvalidDataError(`output ${row.seq} of run ${row.runId}: stored payload is not a CellOutput`);
  return { seq: row.seq, runId: row.runId, executionId: row.executionId, cellId: row.cellId, output: parsed.data };
}

const devicePlansSchema = z.record(z.string(), devicePlanSchema);

/** A stored {tag: plan} map; anything malformed reads as no plans (the charts then say nothing rather than something wrong). */
export function parseDevicePlans(stored: Prisma.JsonValue | null): Record<string, DevicePlan> {
  const parsed = devicePlansSchema.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}
