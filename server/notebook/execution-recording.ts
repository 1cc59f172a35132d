/**
 * What a cell's execution produces, recorded: its output through the output
 * budget (OutputRecorder) to viewers (coalesced) and to its stored record,
 * the metrics and device plans of the execution the kernel runs now, and
 * which cells the current kernel ran to the end. Separate from the runtime
 * because it is the one job that turns kernel messages into events and
 * writes; the runtime only wires it to the kernel and the coalescer.
 */
import type { Cell, CellOutput, LiveMetrics } from "../core/protocol/notebook-model";
import type { KernelMessageOf } from "../core/protocol/kernel-messages";
import type { NotebookEvent } from "../core/protocol/socket-api";
import { sourceHash } from "../core/protocol/source-hash";
import { assertNever } from "../core/assert-never";
import type { ExecutionOutput, ExecutionSink, HangReport } from "../kernel/kernel-session";
import type { TailSource } from "./event-coalescer";
import { mergeLiveMetrics } from "./live-metrics";
import { OutputRecorder, type OutputBudget } from "./output-recorder";
import type { ExecutionRecord } from "./persistence-contract";
import { cellOf, runKernel, setRunState, type KernelView, type RuntimeContext } from "./runtime-context";

export class ExecutionRecording implements TailSource {
  private readonly recorders = new Map<string, OutputRecorder>();
  /** The running execution's record (of `metricsTarget`'s cell): metrics count as hearing from it. */
  private liveRecord: ExecutionRecord | null = null;
  /**
   * The execution the kernel runs now, or ran last: metrics are attributed to
   * it, and its cell's live metrics build up here (viewers get them coalesced).
   * `inDocument` turns false when its cell is deleted.
   */
  private metricsTarget: { cellId: string; executionId: string; live: LiveMetrics | null; inDocument: boolean } | null = null;
  /**
   * Cells the current kernel ran to the end without error, with the hash of
   * the source it ran: what the kernel's scenario evidence was recorded by.
   * A new kernel process starts with none (its evidence registry is empty too).
   */
  private readonly ranInKernel = new Map<string, string>();

  constructor(
    private readonly ctx: RuntimeContext,
    private readonly kernel: KernelView,
    private readonly outputBudget?: OutputBudget,
  ) {}

  /** The coalescer's view of a cell's tail and live metrics. */
  tailOf(cellId: string): ReturnType<TailSource["tailOf"]> {
    const recorder = this.recorders.get(cellId);
    return recorder ? { elided: recorder.elided, segments: recorder.tailSegments(), headOutputs: recorder.headOutputs } : null;
  }

  liveMetricsOf(cellId: string): LiveMetrics | null {
    return this.metricsTarget?.cellId === cellId ? this.metricsTarget.live : null;
  }

  /** The kernel process is gone (or being replaced): its evidence went with it. */
  kernelLeft(): void {
    this.ranInKernel.clear();
  }

  /** Whether the current kernel ran `cell`'s source as it is now, to the end without error. */
  ranAsIs(cell: Cell): boolean {
    return this.ranInKernel.get(cell.id) === sourceHash(cell.source);
  }

  /**
   * The execution that was running under the previous server goes on here:
   * the stored outputs are the cell's (the recorder picks up its budget where
   * it was), and viewers are shown them again from a cleared cell.
   */
  adoptRunning(cellId: string, executionId: string, outputs: CellOutput[], record: ExecutionRecord): void {
    const recorder = new OutputRecorder(this.outputBudget);
    for (const output of outputs) {
      if (output.kind === "stream") recorder.stream(output.name, output.text);
      else recorder.output(output);
    }
    this.ctx.events.emit({ type: "cell-outputs-cleared", cellId });
    for (const output of outputs) this.ctx.events.emit({ type: "cell-output", cellId, output });
    this.recorders.set(cellId, recorder);
    this.metricsTarget = { cellId, executionId, live: null, inDocument: true };
    this.liveRecord = record;
  }

  /** The adopted execution's kernel could not be taken over. */
  adoptionFailed(): void {
    this.liveRecord = null;
  }

  /** `resumedRecord`: the execution was already running under the previous server (no start). */
  sinkFor(cellId: string, executionId: string, ranSourceHash: string, resumedRecord: ExecutionRecord | null = null): ExecutionSink {
    let record: ExecutionRecord | null = resumedRecord;
    return {
      started: () => {
        this.clearOutputs(cellId, { persist: false });
        this.recorders.set(cellId, new OutputRecorder(this.outputBudget));
        this.metricsTarget = { cellId, executionId, live: null, inDocument: true };
        const cell = cellOf(this.ctx.doc, cellId);
        const status = this.kernel.status;
        if ("info" in status && cell) {
          const execution = { id: executionId, cellId, source: cell.source, template: cell.template };
          record = this.ctx.persistence.executionStarted(execution, { ...runKernel(this.kernel, this.ctx.doc), info: status.info });
          this.liveRecord = record;
        }
        // Starting clears the previous run's live metrics too (the reducer's rule for a run that starts).
        setRunState(this.ctx, cellId, "running", { executionId });
      },
      console: (text) => this.recordStream(cellId, "stdout", text, record),
      output: (message) => {
        if (message.type === "stream") this.recordStream(cellId, message.name, message.text, record);
        else this.recordOutput(cellId, toCellOutput(message), record);
      },
      hang: (report) => this.recordOutput(cellId, hangOutput(report), record),
      finished: ({ status, executionCount, durationMs }) => {
        this.ctx.events.flush(); // the document now has every output the viewers were sent
        if (status === "ok") this.ranInKernel.set(cellId, ranSourceHash);
        else this.ranInKernel.delete(cellId);
        if (this.liveRecord === record) this.liveRecord = null;
        const cell = cellOf(this.ctx.doc, cellId);
        const count = executionCount ?? cell?.executionCount ?? null;
        record?.finished({ status, durationMs, executionCount: count, outputs: cell?.outputs ?? [] });
        // Ended before it started (aborted in the queue): stored as this cell's last execution when it was stored as queued.
        const endedQueued = record === null && this.ctx.persistence.queuedExecutionEnded(executionId, { status, executionCount: count, outputs: cell?.outputs ?? [] });
        setRunState(this.ctx, cellId, "idle", { executionCount: count, ...(endedQueued ? { executionId } : {}) });
        this.ctx.events.emit({ type: "cell-finished", cellId, status, durationMs });
      },
    };
  }

  recordMetric(message: KernelMessageOf<"metric">): void {
    const point = { rank: message.rank, step: message.step, values: message.values };
    const tag = message.runId ?? "";
    const target = this.metricsTarget;
    if (target?.inDocument) {
      target.live = mergeLiveMetrics(target.live, point);
      this.ctx.events.metricsChanged(target.cellId);
      this.ctx.events.metricPoint(target.cellId, target.executionId, { tag, ...point });
    }
    this.ctx.persistence.metrics([{ ...point, tag, executionId: target?.executionId ?? "" }]);
    this.liveRecord?.heard();
  }

  /** What a variant of the running cell ran on: stored with the execution, and told to the charts live. */
  recordDevicePlan(message: KernelMessageOf<"device_plan">): void {
    const target = this.metricsTarget;
    if (!target?.inDocument) return;
    const tag = message.runId ?? "";
    this.liveRecord?.devicePlan(tag, message.plan);
    this.ctx.events.emit({ type: "cell-device-plan", cellId: target.cellId, executionId: target.executionId, tag, plan: message.plan });
  }

  /** The cell was deleted: its output budget goes with it. */
  forget(cellId: string): void {
    this.recorders.delete(cellId);
  }

  clearOutputs(cellId: string, { persist } = { persist: true }): void {
    this.recorders.delete(cellId);
    if (persist) this.ctx.persistence.clearOutputs(cellId);
    this.ctx.events.emit({ type: "cell-outputs-cleared", cellId });
  }

  /**
   * An event is about to be numbered (before the document changes). A tail snapshot is stored with the commit that releases it (at the tail
   * cadence, not per chunk): the database holds at least what viewers saw.
   */
  published(event: NotebookEvent): void {
    // liveRecord records the execution metricsTarget names (both set when a run starts).
    if (event.type === "cell-stream-tail" && this.liveRecord !== null && event.cellId === this.metricsTarget?.cellId) {
      const recorder = this.recorders.get(event.cellId);
      if (recorder) this.liveRecord?.tailChanged(() => ({ elidedBytes: recorder.elided, segments: recorder.tailSegments() }));
    }
    if (event.type === "cell-deleted" && this.metricsTarget?.cellId === event.cellId) this.metricsTarget.inDocument = false;
  }

  /** Stream text goes through the output budget; viewers (and so the document) get it coalesced. */
  private recordStream(cellId: string, name: "stdout" | "stderr", text: string, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cellId);
    for (const change of recorder.stream(name, text)) {
      if (change.kind === "append") {
        this.ctx.events.append(cellId, change.name, change.text);
        record?.output({ kind: "stream", name: change.name, text: change.text });
      } else if (change.kind === "tail") {
        // Registered now, read when the batch is written (not per chunk): a write cut after this chunk stores a tail that has it.
        if (record) record.tailChanged(() => ({ elidedBytes: recorder.elided, segments: recorder.tailSegments() }));
        this.ctx.events.tailChanged(cellId);
      }
    }
  }

  private recordOutput(cellId: string, output: CellOutput, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cellId);
    this.ctx.events.flush(); // the viewer's tail must match the recorder's before it is frozen
    for (const change of recorder.output(output)) {
      if (change.kind === "frozen") {
        // The tail becomes part of the log, in place, before the rich output.
        if (change.elided > 0) record?.output({ kind: "elided", elidedBytes: change.elided });
        for (const segment of change.segments) record?.output({ kind: "stream", name: segment.name, text: segment.text });
        record?.tailChanged(() => null);
      } else if (change.kind === "output") {
        // What the recorder kept of it (all of it, unless the budget bounds rich outputs).
        record?.output(change.output);
        this.ctx.events.emit({ type: "cell-output", cellId, output: change.output });
      }
    }
  }

  private recorderOf(cellId: string): OutputRecorder {
    let recorder = this.recorders.get(cellId);
    if (!recorder) {
      recorder = new OutputRecorder(this.outputBudget);
      this.recorders.set(cellId, recorder);
    }
    return recorder;
  }
}

function hangOutput(report: HangReport): CellOutput {
  return { kind: "hang", idleMs: Math.round(report.idleMs), summary: report.summary, processes: report.processes, answeredBy: report.answeredBy };
}

function toCellOutput(message: Exclude<ExecutionOutput, { type: "stream" }>): CellOutput {
  switch (message.type) {
    case "execute_result":
      return { kind: "result", executionCount: message.count, data: message.data };
    case "display_data":
      return { kind: "display", data: message.data };
    case "error":
      return { kind: "error", ename: message.ename, evalue: message.evalue, traceback: message.traceback };
    default:
      return assertNever(message);
  }
}
