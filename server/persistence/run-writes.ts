/**
 * The writes of a kernel run's life, as the lab's own prepared statements
 * (sql.ts): what every cell run stores, so it costs a handful of statements
 * and no query compiler. RunRepository's methods and the runtime's group
 * commit (RunRepository.write) are both made of these, so there is one
 * implementation of each write.
 *
 * Values are written in the formats Prisma reads (sql.ts: times, JSON text),
 * every timestamp given explicitly (Prisma fills @default(now()) itself; the
 * database's own default has another format).
 */
import type { CellOutput } from "../core/protocol/notebook-model";
import { NotFoundError } from "./errors";
import { rowChunks, valuesList, type SqlQueries, type SqlRow } from "./sql";
import type { JsonValue, LastRunStatus, LiveTail, MetricInput, SequencedOutput } from "./types";

/** Writes the runtime hands over between two commits, applied in order in one transaction. */
export type RunWrite =
  | {
      kind: "run-started";
      runId: string;
      notebookId: string;
      userId: string | null;
      host: string;
      deviceMode: string;
      /** A kernel a host agent owns: which host, its id there, and what it said of itself. */
      agent: { hostId: string; agentKernelId: string; kernelInfo: JsonValue } | null;
      at: Date;
    }
  | {
      /** A run stored while its kernel was starting: what the kernel said of itself once it was up. */
      kind: "run-identified";
      runId: string;
      deviceMode: string;
      agent: { hostId: string; agentKernelId: string; kernelInfo: JsonValue } | null;
    }
  | {
      kind: "execution-started";
      notebookId: string;
      runId: string;
      executionId: string;
      cellId: string;
      source: string;
      template: { id: string; parameters: Record<string, string | number | boolean> } | null;
      at: Date;
      /** Its row was stored as queued (execution-queued): marked running, or inserted when that write failed. */
      queued?: boolean;
      /** When it was queued, where that was earlier than `at` and not stored (the batch's queued write merged into this one). */
      queuedAt?: Date;
      /** false: the cell is not pointed at it now (its execution-finished in the same batch does that). */
      pointsCell?: boolean;
    }
  | {
      /** A cell queued behind the running one: stored so that a server taking the kernel over runs it. */
      kind: "execution-queued";
      runId: string;
      executionId: string;
      cellId: string;
      source: string;
      template: { id: string; parameters: Record<string, string | number | boolean> } | null;
      at: Date;
    }
  | {
      kind: "execution-progress";
      notebookId: string;
      runId: string;
      executionId: string;
      cellId: string;
      /** New records of the output log, in order. */
      outputs: CellOutput[];
      /** The tail viewers see past the head budget; null clears it; absent leaves it. */
      liveTail?: LiveTail | null;
      heardAt?: Date;
    }
  | {
      kind: "execution-finished";
      notebookId: string;
      executionId: string;
      cellId: string;
      status: LastRunStatus;
      durationMs: number;
      executionCount: number | null;
      /** What the cell shows now: stored as the cell's outputs with its last run. */
      outputs: CellOutput[];
      at: Date;
    }
  | { kind: "metrics"; runId: string; notebookId: string; points: readonly MetricInput[]; repository: MetricAppender }
  /** Everything derived from the kernel's output up to `agentSeq` is stored (written with it). */
  | { kind: "read-position"; runId: string; agentSeq: number }
  | { kind: "cell-outputs-cleared"; notebookId: string; cellId: string };

/** Appends metric points inside a transaction (MetricRepository does; named here so neither module imports the other's class). */
export interface MetricAppender {
  appendIn(tx: SqlQueries, runId: string, notebookId: string, points: readonly MetricInput[], created: Map<string, number>): Promise<unknown>;
  remember(runId: string, created: Map<string, number>): void;
}

/** What to do once the transaction that applied `writes` has committed (metric series ids become cacheable). */
export async function applyRunWrites(tx: SqlQueries, writes: readonly RunWrite[]): Promise<() => void> {
  const afterCommit: Array<() => void> = [];
  for (const write of writes) {
    switch (write.kind) {
      case "run-started":
        await insertRun(tx, write);
        break;
      case "run-identified":
        await tx.run(`UPDATE "KernelRun" SET "deviceMode" = ?, "hostId" = ?, "agentKernelId" = ?, "kernelInfo" = ? WHERE "id" = ?`, [
          write.deviceMode,
          write.agent?.hostId ?? null,
          write.agent?.agentKernelId ?? null,
          write.agent ? JSON.stringify(write.agent.kernelInfo) : null,
          write.runId,
        ]);
        break;
      case "execution-started": {
        const marked = write.queued === true ? await tx.run(`UPDATE "CellExecution" SET "status" = 'running', "startedAt" = ? WHERE "id" = ? AND "status" = 'queued'`, [tx.time(write.at), write.executionId]) : 0;
        if (marked === 0) await insertExecution(tx, { ...write, at: write.queuedAt ?? write.at, status: "running", startedAt: write.at });
        if (write.pointsCell !== false) await pointCellAt(tx, write.notebookId, write.cellId, write.executionId);
        break;
      }
      case "execution-queued":
        await insertExecution(tx, { ...write, status: "queued", startedAt: null });
        break;
      case "execution-progress":
        if (write.outputs.length > 0) await insertOutputs(tx, write, write.outputs);
        await setExecutionProgress(tx, write.executionId, write);
        break;
      case "execution-finished":
        await finishExecutionRow(tx, write);
        await setCellResult(tx, write);
        break;
      case "metrics": {
        const created = new Map<string, number>();
        await write.repository.appendIn(tx, write.runId, write.notebookId, write.points, created);
        afterCommit.push(() => write.repository.remember(write.runId, created));
        break;
      }
      case "read-position":
        await tx.run(`UPDATE "KernelRun" SET "agentSeq" = ? WHERE "id" = ? AND "agentSeq" < ?`, [write.agentSeq, write.runId, write.agentSeq]);
        break;
      case "cell-outputs-cleared":
        await tx.run(`UPDATE "Cell" SET "outputs" = '[]', "executionCount" = NULL, "lastRun" = NULL WHERE "notebookId" = ? AND "id" = ?`, [write.notebookId, write.cellId]);
        break;
    }
  }
  return () => {
    for (const each of afterCommit) each();
  };
}

export async function insertRun(tx: SqlQueries, run: Omit<Extract<RunWrite, { kind: "run-started" }>, "kind">): Promise<void> {
  await tx.run(
    `INSERT INTO "KernelRun" ("id", "notebookId", "userId", "host", "deviceMode", "status", "startedAt", "hostId", "agentKernelId", "kernelInfo") VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`,
    [run.runId, run.notebookId, run.userId, run.host, run.deviceMode, tx.time(run.at), run.agent?.hostId ?? null, run.agent?.agentKernelId ?? null, run.agent ? JSON.stringify(run.agent.kernelInfo) : null],
  );
}

export async function insertExecution(
  tx: SqlQueries,
  execution: { executionId: string; runId: string; cellId: string; source: string; template: { id: string; parameters: Record<string, string | number | boolean> } | null; at: Date; status: "queued" | "running"; startedAt: Date | null },
): Promise<void> {
  await tx.run(
    `INSERT INTO "CellExecution" ("id", "runId", "cellId", "source", "status", "queuedAt", "startedAt", "templateId", "parameters") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      execution.executionId,
      execution.runId,
      execution.cellId,
      execution.source,
      execution.status,
      tx.time(execution.at),
      execution.startedAt ? tx.time(execution.startedAt) : null,
      execution.template?.id ?? null,
      execution.template ? JSON.stringify(execution.template.parameters) : null,
    ],
  );
}

/** The cell points at its running execution, so a viewer who reloads mid-run finds its metrics. */
export async function pointCellAt(tx: SqlQueries, notebookId: string, cellId: string, executionId: string): Promise<void> {
  await tx.run(`UPDATE "Cell" SET "lastExecutionId" = ? WHERE "notebookId" = ? AND "id" = ?`, [executionId, notebookId, cellId]);
}

/** Takes `count` numbers from the notebook's sequence; returns the last one. */
export async function claimSeqs(tx: SqlQueries, notebookId: string, count: number): Promise<number> {
  const [row] = await tx.all(`UPDATE "Notebook" SET "lastSeq" = "lastSeq" + ? WHERE "id" = ? RETURNING "lastSeq"`, [count, notebookId]);
  if (!row) throw new NotFoundError("notebook", notebookId);
  return integer(row, "lastSeq");
}

/** Appends an execution's output records, numbered in its notebook's sequence. */
export async function insertOutputs(
  tx: SqlQueries,
  where: { notebookId: string; runId: string; executionId: string; cellId: string },
  outputs: readonly CellOutput[],
): Promise<SequencedOutput[]> {
  const first = (await claimSeqs(tx, where.notebookId, outputs.length)) - outputs.length + 1;
  const createdAt = tx.time(new Date());
  const records = outputs.map((output, index) => ({ seq: first + index, runId: where.runId, executionId: where.executionId, cellId: where.cellId, output }));
  let at = 0;
  for (const size of rowChunks(records.length)) {
    const params = records.slice(at, at + size).flatMap((record) => [where.notebookId, record.seq, where.runId, where.executionId, where.cellId, record.output.kind, JSON.stringify(record.output), createdAt]);
    await tx.run(`INSERT INTO "CellOutput" ("notebookId", "seq", "runId", "executionId", "cellId", "kind", "payload", "createdAt") VALUES ${valuesList(size, 8)}`, params);
    at += size;
  }
  return records;
}

/** When the lab last heard from a running execution, and the tail its viewers see; either may be left as it is. */
export async function setExecutionProgress(tx: SqlQueries, executionId: string, progress: { liveTail?: LiveTail | null; heardAt?: Date }): Promise<void> {
  const tail = progress.liveTail === undefined ? undefined : progress.liveTail === null ? null : JSON.stringify(progress.liveTail);
  if (progress.heardAt !== undefined && tail !== undefined) {
    await tx.run(`UPDATE "CellExecution" SET "lastHeardAt" = ?, "liveTail" = ? WHERE "id" = ?`, [tx.time(progress.heardAt), tail, executionId]);
  } else if (progress.heardAt !== undefined) {
    await tx.run(`UPDATE "CellExecution" SET "lastHeardAt" = ? WHERE "id" = ?`, [tx.time(progress.heardAt), executionId]);
  } else if (tail !== undefined) {
    await tx.run(`UPDATE "CellExecution" SET "liveTail" = ? WHERE "id" = ?`, [tail, executionId]);
  }
}

export async function finishExecutionRow(tx: SqlQueries, end: { executionId: string; status: LastRunStatus; durationMs: number; executionCount: number | null; at: Date }): Promise<number> {
  return tx.run(`UPDATE "CellExecution" SET "status" = ?, "endedAt" = ?, "durationMs" = ?, "executionCount" = ? WHERE "id" = ?`, [
    end.status,
    tx.time(end.at),
    end.durationMs,
    end.executionCount,
    end.executionId,
  ]);
}

/** What the cell shows after a run: its outputs, count and how the run ended. */
export async function setCellResult(
  tx: SqlQueries,
  result: { notebookId: string; cellId: string; executionId: string; status: LastRunStatus; durationMs: number; executionCount: number | null; outputs: readonly CellOutput[] },
): Promise<void> {
  await tx.run(`UPDATE "Cell" SET "outputs" = ?, "executionCount" = ?, "lastRun" = ?, "lastExecutionId" = ? WHERE "notebookId" = ? AND "id" = ?`, [
    JSON.stringify(result.outputs),
    result.executionCount,
    JSON.stringify({ status: result.status, durationMs: result.durationMs }),
    result.executionId,
    result.notebookId,
    result.cellId,
  ]);
}

/** A whole-number column (SQLite and PostgreSQL's int4 give numbers; a count or int8 may come as a string or bigint). */
export function integer(row: SqlRow, column: string): number {
  const value = row[column];
  const number = typeof value === "number" ? value : typeof value === "bigint" || typeof value === "string" ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) throw new Error(`column ${column} is not a whole number: ${String(value)}`);
  return number;
}

/** A text column, or null. */
export function textOrNull(row: SqlRow, column: string): string | null {
  const value = row[column];
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw new Error(`column ${column} is not text`);
  return value;
}
