/**
 * What a notebook runtime writes to the database: edits (awaited, so an
 * acknowledgement means "saved"), and runs, outputs and metrics as they
 * stream (batched, so a flooding cell never waits on SQLite).
 * `commit()` writes whatever is batched and resolves once it is stored: the
 * runtime shows viewers nothing before that (durable before visible).
 *
 * One write per group commit: every run write since the last commit (a run
 * or execution started, outputs, metrics, an execution finished, the
 * kernel's read position) goes to the database as one transaction of
 * prepared statements (RunRepository.write), not a transaction each.
 */
import { randomUUID } from "node:crypto";
import type { CellKind, CellOutput, CellTemplate, KernelInfo, KernelSpec, Prediction } from "../core/protocol/notebook-model";
import type { ExecutionStatus } from "../kernel/kernel-session";
import type { EditBase, JsonValue, LiveTail, MetricInput } from "../persistence/types";
import { newRunId, type MetricRepository, type NotebookRepository, type PredictionRepository, type RunRepository } from "../persistence";
import { isDatabaseUnreachable, NotDrivingError } from "../persistence/errors";
import type { RunWrite } from "../persistence/run-writes";
import type { ExecutionRecord, NotebookPersistence, RunKernel } from "./persistence-contract";
import { WriteQueue } from "./write-queue";
import { errorMessage } from "../core/errors";

export interface Repositories {
  notebooks: NotebookRepository;
  runs: RunRepository;
  metrics: MetricRepository;
  predictions: PredictionRepository;
}

type QueuedExecution = { id: string; cellId: string; source: string; template: CellTemplate | null };

/** A run's device mode until its kernel says what it runs on. */
export const KERNEL_STARTING = "not known yet: its kernel was starting";

function templateRef(template: CellTemplate | null): { id: string; parameters: CellTemplate["parameters"] } | null {
  return template ? { id: template.id, parameters: template.parameters } : null;
}

/** Outputs and metrics not yet committed for a viewer are still written this often. */
const PROGRESS_BATCH_MS = 200;
const METRIC_BATCH_POINTS = 5_000;
/** How long a write waits for an unreachable database before it fails (and is reported) like any other. */
const UNREACHABLE_RETRY_MS = 120_000;

/** One running execution's progress since the last write. */
interface ExecutionBatch {
  id: string;
  runId: string;
  cellId: string;
  outputs: CellOutput[];
  tail: (() => LiveTail | null) | null;
  heardAt: Date | null;
}

export class DatabaseNotebookPersistence implements NotebookPersistence {
  private readonly queue: WriteQueue;
  private version: number;
  /** The current kernel run (named here, stored with the next commit); null between kernels. */
  private runId: string | null = null;
  /** Run writes not yet handed to the queue, in order: one transaction at the next commit or progress write. */
  private writes: RunWrite[] = [];
  private pendingMetrics: MetricInput[] = [];
  private progressTimer: NodeJS.Timeout | null = null;
  /** Running executions' batched progress, written with the metrics and the read position by commit() or the timer. */
  private readonly batches = new Set<ExecutionBatch>();
  private kernelPosition: () => number = () => 0;
  /** The read position the last progress write stored (or will have stored, once the queue reaches it). */
  private writtenPosition = 0;
  /** Executions stored as queued that have not started: their start only marks them running. */
  private readonly storedQueued = new Set<string>();
  /** Cells whose last source write failed: the document (and its viewers) has a text the database lacks. */
  private readonly unstoredSources = new Set<string>();
  /** The current run was stored before its kernel said what it is: told at its first start (run-identified). */
  private runUnidentified = false;
  /** Set once a group commit was refused because another server drives the notebook now (see commit()). */
  private notDriving: NotDrivingError | null = null;

  constructor(
    private readonly notebookId: string,
    version: number,
    private readonly repos: Repositories,
    private readonly userId: string,
    report: (message: string) => void,
    /** With several lab servers: this server's id, so a commit made after another took the notebook over is refused. */
    private readonly driverId: string | null = null,
  ) {
    this.version = version;
    this.queue = new WriteQueue((error, what) => report(`saving ${what} failed: ${errorMessage(error)}`), {
      // A database restart (seconds) delays the writes, in order, instead of losing them; viewers wait with them.
      when: isDatabaseUnreachable,
      limitMs: UNREACHABLE_RETRY_MS,
      onRetry: (error, what) => report(`saving ${what} waits for the database: ${error instanceof Error ? (error.message.split("\n").filter(Boolean).pop() ?? error.message) : String(error)}`),
    });
  }

  insertCell(index: number, cell: { id: string; kind: CellKind; source: string }): Promise<void> {
    return this.edit("a new cell", (base) => this.repos.notebooks.insertCell(this.notebookId, base, index, cell));
  }

  deleteCell(cellId: string): Promise<void> {
    this.unstoredSources.delete(cellId);
    return this.edit("a deletion", (base) => this.repos.notebooks.deleteCell(this.notebookId, base, cellId));
  }

  moveCell(cellId: string, toIndex: number): Promise<void> {
    return this.edit("a move", (base) => this.repos.notebooks.moveCell(this.notebookId, base, cellId, toIndex));
  }

  async setSource(cellId: string, source: string): Promise<void> {
    try {
      await this.edit("a cell's source", (base) => this.repos.notebooks.updateCellSource(this.notebookId, base, cellId, source));
      this.unstoredSources.delete(cellId);
    } catch (error) {
      this.unstoredSources.add(cellId);
      throw error;
    }
  }

  sourceUnstored(cellId: string): boolean {
    return this.unstoredSources.has(cellId);
  }

  setKind(cellId: string, kind: CellKind): Promise<void> {
    return this.edit("a cell's kind", (base) => this.repos.notebooks.updateCell(this.notebookId, base, cellId, { kind }));
  }

  setTemplate(cellId: string, source: string, template: CellTemplate | null): Promise<void> {
    return this.edit("a cell's template", (base) => this.repos.notebooks.updateCell(this.notebookId, base, cellId, { source, template }));
  }

  async commitPrediction(input: { questionId: string; question: string; choice: string; afterRun: boolean }): Promise<Prediction> {
    this.flushWrites();
    const stored = await this.queue.run("a prediction", () => this.repos.predictions.commit(this.notebookId, this.userId, input));
    return { questionId: stored.questionId, choice: stored.choice, afterRun: stored.afterRun, committedAt: stored.committedAt.toISOString() };
  }

  rename(title: string): Promise<void> {
    return this.edit("the title", (base) => this.repos.notebooks.rename(this.notebookId, title, base));
  }

  setKernelSpec(spec: KernelSpec): Promise<void> {
    return this.edit("the kernel spec", (base) => this.repos.notebooks.setKernelSpec(this.notebookId, spec, base));
  }

  clearOutputs(cellId: string): void {
    this.writes.push({ kind: "cell-outputs-cleared", notebookId: this.notebookId, cellId });
    this.later();
  }

  readKernelPositionFrom(position: () => number): void {
    this.kernelPosition = position;
  }

  runResumed(runId: string): void {
    this.runId = runId;
    this.writtenPosition = 0;
  }

  executionQueued(execution: QueuedExecution, where: { kernel: RunKernel } | { stored: true }): void {
    if ("stored" in where) this.storedQueued.add(execution.id);
    else this.storeQueued(this.ensureRun(where.kernel), execution);
  }

  queuedExecutionEnded(executionId: string, end: { status: ExecutionStatus; executionCount: number | null; outputs: CellOutput[] }): boolean {
    if (!this.storedQueued.delete(executionId)) return false;
    this.flushWrites(); // its queued row first
    this.queue.fire("an execution that never started", () => this.repos.runs.finishExecution(executionId, { ...end, durationMs: 0 }));
    return true;
  }

  /** Stored with the next commit, in the same transaction as the run writes before them. */
  private storeQueued(runId: string, execution: QueuedExecution): void {
    this.storedQueued.add(execution.id);
    this.writes.push({ kind: "execution-queued", runId, executionId: execution.id, cellId: execution.cellId, source: execution.source, template: templateRef(execution.template), at: new Date() });
    this.later();
  }

  executionStarted(execution: { id: string; cellId: string; source: string; template: CellTemplate | null }, kernel: RunKernel & { info: KernelInfo }): ExecutionRecord {
    const runId = this.ensureRun(kernel);
    if (this.runUnidentified) {
      // Stored while its kernel was starting: what it runs on, and the agent's id a takeover needs, are known now.
      this.runUnidentified = false;
      this.writes.push({ kind: "run-identified", runId, deviceMode: kernel.info.deviceMode, agent: agentOf(kernel) });
    }
    const template = templateRef(execution.template);
    // Stored as queued already: its row is marked running (or inserted, should that write have failed).
    const queued = this.storedQueued.delete(execution.id);
    this.writes.push({ kind: "execution-started", notebookId: this.notebookId, runId, executionId: execution.id, cellId: execution.cellId, source: execution.source, template, at: new Date(), queued });
    return this.recordFor(execution.id, runId, execution.cellId);
  }

  executionResumed(executionId: string, cellId: string): ExecutionRecord {
    // A resumed execution belongs to the resumed run (runResumed comes first).
    return this.recordFor(executionId, this.runId ?? "", cellId);
  }

  private recordFor(executionId: string, runId: string, cellId: string): ExecutionRecord {
    const batch: ExecutionBatch = { id: executionId, runId, cellId, outputs: [], tail: null, heardAt: null };
    this.batches.add(batch);
    return {
      output: (output) => {
        batch.outputs.push(output);
        batch.heardAt = new Date();
        this.later();
      },
      tailChanged: (current) => {
        batch.tail = current;
        batch.heardAt = new Date();
        this.later();
      },
      heard: () => {
        batch.heardAt = new Date();
        this.later();
      },
      devicePlan: (tag, plan) => {
        this.flushWrites();
        this.queue.fire("a device plan", () => this.repos.runs.recordDevicePlan(executionId, tag, plan));
      },
      finished: ({ status, durationMs, executionCount, outputs: shown }) => {
        this.collectProgress();
        this.batches.delete(batch);
        this.writes.push({ kind: "execution-finished", notebookId: this.notebookId, executionId, cellId, status, durationMs, executionCount, outputs: shown, at: new Date() });
        this.later();
      },
    };
  }

  metrics(points: MetricInput[]): void {
    if (!this.runId) return; // no run: metrics from outside any cell run have nowhere to go
    this.pendingMetrics.push(...points);
    if (this.pendingMetrics.length >= METRIC_BATCH_POINTS) this.writeProgress();
    else this.later();
  }

  private later(): void {
    this.progressTimer ??= setTimeout(() => this.writeProgress(), PROGRESS_BATCH_MS);
  }

  /** Everything batched so far, handed to the queue as one write. */
  private writeProgress(): void {
    this.collectProgress();
    this.flushWrites();
  }

  /**
   * Everything the kernel's output produced so far, as writes, with the read
   * position it derives from: outputs, tails and metrics are appended
   * synchronously as each message is handled, so what is cut here is exactly
   * the effect of every message up to that position.
   */
  private collectProgress(): void {
    if (this.progressTimer) clearTimeout(this.progressTimer);
    this.progressTimer = null;
    const position = this.kernelPosition();
    for (const batch of this.batches) {
      if (batch.outputs.length === 0 && batch.tail === null && batch.heardAt === null) continue;
      this.writes.push({
        kind: "execution-progress",
        notebookId: this.notebookId,
        runId: batch.runId,
        executionId: batch.id,
        cellId: batch.cellId,
        outputs: batch.outputs,
        ...(batch.tail ? { liveTail: batch.tail() } : {}),
        ...(batch.heardAt ? { heardAt: batch.heardAt } : {}),
      });
      batch.outputs = [];
      batch.tail = null;
      batch.heardAt = null;
    }
    const runId = this.runId;
    if (runId !== null && this.pendingMetrics.length > 0) {
      this.writes.push({ kind: "metrics", runId, notebookId: this.notebookId, points: this.pendingMetrics, repository: this.repos.metrics });
    }
    this.pendingMetrics = [];
    if (runId !== null && position > this.writtenPosition) {
      this.writtenPosition = position;
      const last = this.writes[this.writes.length - 1];
      if (last?.kind === "read-position" && last.runId === runId) last.agentSeq = position;
      else this.writes.push({ kind: "read-position", runId, agentSeq: position });
    }
  }

  /** The run writes so far, as one transaction after everything queued before. */
  private flushWrites(): void {
    if (this.writes.length === 0) return;
    const writes = this.writes;
    this.writes = [];
    const commit = { notebookId: this.notebookId, commitId: randomUUID(), ...(this.driverId ? { driver: this.driverId } : {}) };
    this.queue
      .run("outputs and runs", (attempt) => this.repos.runs.write(writes, { ...commit, retried: attempt > 0 }))
      .catch((error: unknown) => {
        if (error instanceof NotDrivingError) this.notDriving ??= error;
      });
  }

  kernelEnded(status: "finished" | "interrupted" | "died", reason: string | null): void {
    const runId = this.runId;
    if (!runId) return;
    this.writeProgress();
    this.runId = null;
    this.runUnidentified = false;
    this.writtenPosition = 0;
    this.queue.fire("the end of a kernel run", () => this.repos.runs.finish(runId, { status, exitReason: reason }));
  }

  async commit(): Promise<void> {
    this.collectProgress();
    // A read position with nothing else to store (the kernel's status messages between runs) waits for the
    // next write or the progress timer: the messages it covers stored nothing, so a takeover that replays
    // them from the older position neither loses nor doubles anything. Saves a transaction per cell.
    const [only] = this.writes;
    if (this.writes.length === 1 && only?.kind === "read-position") this.later();
    else this.flushWrites();
    await this.queue.drain();
    // Not stored because another server drives the notebook now: the caller must not tell the host agent
    // that this output is stored (the new driver replays it from the position stored before it took over).
    if (this.notDriving) throw this.notDriving;
  }

  async flush(): Promise<void> {
    this.writeProgress();
    await this.queue.drain();
  }

  /**
   * The current run, stored with the next commit when there is none: at a
   * kernel's first queued or started cell, whether or not the kernel is up
   * yet (a Run taken while it starts is stored, and ends with the run).
   */
  private ensureRun(kernel: RunKernel): string {
    if (!this.runId) {
      this.writtenPosition = 0;
      this.runId = newRunId();
      this.runUnidentified = kernel.info === null;
      const deviceMode = kernel.info?.deviceMode ?? KERNEL_STARTING;
      this.writes.push({ kind: "run-started", runId: this.runId, notebookId: this.notebookId, userId: this.userId, host: kernel.host, deviceMode, agent: agentOf(kernel), at: new Date() });
    }
    return this.runId;
  }

  /**
   * Edits are ordered with every other write and carry the notebook's version, with an id made once per edit:
   * an attempt after the connection dropped during its COMMIT learns from it whether the first one was stored
   * (NotebookRepository's edit), instead of conflicting with itself and leaving this version behind.
   */
  private edit(what: string, write: (base: EditBase) => Promise<{ version: number }>): Promise<void> {
    this.flushWrites();
    const editId = randomUUID();
    return this.queue.run(what, async (attempt) => {
      const { version } = await write({ version: this.version, editId, retried: attempt > 0 });
      this.version = version;
    });
  }
}

/** A kernel a host agent owns, with what it said of itself (what a takeover needs); null on the server's own PTY or before it said. */
function agentOf(kernel: RunKernel): { hostId: string; agentKernelId: string; kernelInfo: JsonValue } | null {
  return kernel.agent && kernel.info ? { ...kernel.agent, kernelInfo: { ...kernel.info } } : null;
}

