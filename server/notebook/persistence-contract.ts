/**
 * What a notebook runtime asks of storage (NotebookPersistence), apart from
 * how the database does it (notebook-persistence.ts): the runtime, the hub
 * and the benchmarks depend on this contract only, and NO_PERSISTENCE keeps
 * it for runtimes with nowhere to write.
 */
import type { CellKind, CellOutput, CellTemplate, KernelInfo, KernelSpec, Prediction } from "../core/protocol/notebook-model";
import type { DevicePlan } from "../core/protocol/kernel-messages";
import type { ExecutionStatus } from "../kernel/kernel-session";
import type { LiveTail, MetricInput } from "../persistence/types";

/** The kernel a run is on: `info` is null while it is still starting (it has not said what it is yet). */
export interface RunKernel {
  info: KernelInfo | null;
  host: string;
  agent: { hostId: string; agentKernelId: string } | null;
}

export interface ExecutionRecord {
  /** A new record of the output log (stream text of the head, a rich output, a frozen tail). */
  output(output: CellOutput): void;
  /** The tail viewers see changed (the cell is past its head budget); read at the next commit. */
  tailChanged(current: () => LiveTail | null): void;
  /** The lab heard from the execution (a metric, say); output counts by itself. */
  heard(): void;
  /** The devices the variant `tag` of this execution ran on. */
  devicePlan(tag: string, plan: DevicePlan): void;
  finished(result: { status: ExecutionStatus; durationMs: number; executionCount: number | null; outputs: CellOutput[] }): void;
}

export interface NotebookPersistence {
  insertCell(index: number, cell: { id: string; kind: CellKind; source: string }): Promise<void>;
  deleteCell(cellId: string): Promise<void>;
  moveCell(cellId: string, toIndex: number): Promise<void>;
  setSource(cellId: string, source: string): Promise<void>;
  /**
   * Whether the last write of this cell's source failed (the database was away): viewers were shown
   * the text, so the same text sent again must be written, not taken as already there.
   */
  sourceUnstored(cellId: string): boolean;
  setKind(cellId: string, kind: CellKind): Promise<void>;
  /** A templated cell re-rendered, detached or reattached: source and template saved together. */
  setTemplate(cellId: string, source: string, template: CellTemplate | null): Promise<void>;
  commitPrediction(input: { questionId: string; question: string; choice: string; afterRun: boolean }): Promise<Prediction>;
  rename(title: string): Promise<void>;
  setKernelSpec(spec: KernelSpec): Promise<void>;
  clearOutputs(cellId: string): void;
  /** A cell started running on a kernel described by `kernel`, as execution `executionId`. */
  executionStarted(execution: { id: string; cellId: string; source: string; template: CellTemplate | null }, kernel: RunKernel & { info: KernelInfo }): ExecutionRecord;
  /**
   * A cell was queued to run: stored as queued at once, under the kernel's
   * run (stored now if this is the run's first cell, even while its kernel
   * is still starting), so that a server that dies before it starts leaves
   * it to the next one (the takeover runs it or ends it, saying why).
   * `{ stored: true }`: it already is (a takeover queues it again).
   */
  executionQueued(execution: { id: string; cellId: string; source: string; template: CellTemplate | null }, where: { kernel: RunKernel } | { stored: true }): void;
  /**
   * A queued execution ended without starting (aborted behind a cell that
   * failed, an interrupt, a dead kernel): stored as its cell's last run when
   * it was stored as queued, which the answer says.
   */
  queuedExecutionEnded(executionId: string, end: { status: ExecutionStatus; executionCount: number | null; outputs: CellOutput[] }): boolean;
  /** A run that outlived the previous server is this notebook's again (its kernel was taken over). */
  runResumed(runId: string): void;
  /** The execution that was running (in `cellId`) when the previous server stopped: its output goes on here. */
  executionResumed(executionId: string, cellId: string): ExecutionRecord;
  /** How far into the current kernel's numbered output everything has been handed to this persistence. */
  readKernelPositionFrom(position: () => number): void;
  metrics(points: MetricInput[]): void;
  kernelEnded(status: "finished" | "interrupted" | "died", reason: string | null): void;
  /** Writes everything batched so far (outputs, tails, metrics, the kernel read position) and resolves once it is all stored. */
  commit(): Promise<void>;
  /** Everything queued has been written. */
  flush(): Promise<void>;
}

const NO_RECORD: ExecutionRecord = { output: () => undefined, tailChanged: () => undefined, heard: () => undefined, devicePlan: () => undefined, finished: () => undefined };

/** For runtimes with nowhere to write (tests of the kernel path, benchmarks). */
export const NO_PERSISTENCE: NotebookPersistence = {
  insertCell: async () => undefined,
  deleteCell: async () => undefined,
  moveCell: async () => undefined,
  setSource: async () => undefined,
  sourceUnstored: () => false,
  setKind: async () => undefined,
  setTemplate: async () => undefined,
  commitPrediction: async (input) => ({ questionId: input.questionId, choice: input.choice, afterRun: input.afterRun, committedAt: new Date().toISOString() }),
  rename: async () => undefined,
  setKernelSpec: async () => undefined,
  clearOutputs: () => undefined,
  executionQueued: () => undefined,
  queuedExecutionEnded: () => false,
  executionStarted: () => NO_RECORD,
  runResumed: () => undefined,
  executionResumed: () => NO_RECORD,
  readKernelPositionFrom: () => undefined,
  metrics: () => undefined,
  kernelEnded: () => undefined,
  commit: async () => undefined,
  flush: async () => undefined,
};
