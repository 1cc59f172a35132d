/**
 * One open notebook: its document, its kernel session, and the translation
 * from kernel output to notebook events for every viewer and to database
 * writes. Commands arrive already validated; each either changes the
 * document, saves and broadcasts, or throws a CommandError.
 *
 * Durable before visible: every event is numbered when it happens but sent
 * to viewers only once the writes queued before it are committed
 * (DurabilityGate), and a joining viewer's snapshot is answered only then.
 */
import { randomUUID } from "node:crypto";
import type { Cell, CellOutput, CellTemplate, LiveMetrics, NotebookDocument, ParameterValue } from "../core/protocol/notebook-model";
import type { KernelMessageOf } from "../core/protocol/kernel-messages";
import type { CommandAck, JournalPosition, NotebookCommand, NotebookEvent } from "../core/protocol/socket-api";
import { sourceHash } from "../core/protocol/source-hash";
import { assertNever } from "../core/assert-never";
import type { KernelHost } from "../kernel/kernel-host";
import { KernelSession, type ExecutionOutput, type ExecutionSink, type HangReport } from "../kernel/kernel-session";
import { EventCoalescer, type CoalescerOptions } from "./event-coalescer";
import { DurabilityGate } from "./durability-gate";
import { EventJournal } from "./event-journal";
import { startsKernel } from "./kernel-policy";
import { NO_PERSISTENCE, mergeLiveMetrics, type ExecutionRecord, type NotebookPersistence } from "./notebook-persistence";
import { CommandError, deleteCell, findCell, insertCell, moveCell, newCell, setKind, setSource } from "./notebook-ops";
import { OutputRecorder, type OutputBudget } from "./output-recorder";
import { assertEditable, attachedSiblings, attachedTemplate, findQuestion, NO_TEMPLATES, questionAlreadyRun, scenarioOf, type TemplateRenderer } from "./template-cells";

export interface NotebookRuntimeOptions {
  host: () => KernelHost;
  broadcast: (event: NotebookEvent, seq: number) => void;
  persistence?: NotebookPersistence;
  outputBudget?: OutputBudget;
  coalescing?: CoalescerOptions;
  /** Re-renders templated cells (the scenario catalog); without it, forms are refused. */
  templates?: TemplateRenderer;
  /** A busy cell silent for this long gets a hang report (KernelSession's default when unset). */
  hangAfterMs?: number;
  /**
   * false: events reach viewers before their writes are committed (the old
   * behaviour). Only for measuring what durability costs (tests/bench/durability.ts).
   */
  durableBroadcast?: boolean;
  log?: (level: "info" | "warning" | "error", message: string) => void;
  /** A place under the server's kernel cap before this notebook starts a kernel (throws at the cap); returns its release. */
  claimKernel?: () => () => void;
}

/** set-source refused: the cell changed since the edit's base (another tab). */
export class SourceConflictError extends CommandError {
  constructor(readonly cellId: string, readonly theirSource: string) {
    super(`cell ${cellId} was changed by someone else since you started editing it`);
  }
}

export class NotebookRuntime {
  readonly kernel: KernelSession;
  private readonly host: KernelHost;
  private readonly recorders = new Map<string, OutputRecorder>();
  private readonly coalescer: EventCoalescer;
  private readonly journal = new EventJournal();
  private readonly gate: DurabilityGate<{ event: NotebookEvent; seq: number }>;
  private readonly persistence: NotebookPersistence;
  /** The running execution's record: metrics count as hearing from it. */
  private liveRecord: ExecutionRecord | null = null;
  /** Set while the lab server stops: how the kernel run and its running cell are stored. */
  private stopping: { reason: string } | null = null;
  /** The cell whose code the kernel runs now, or ran last: metrics are attributed to it. */
  private metricsCell: Cell | null = null;
  /** Form changes render asynchronously; one at a time, so each starts from the values the last one left. */
  private templateWork: Promise<unknown> = Promise.resolve();

  constructor(readonly doc: NotebookDocument, private readonly options: NotebookRuntimeOptions) {
    this.persistence = options.persistence ?? NO_PERSISTENCE;
    this.gate = new DurabilityGate(
      options.durableBroadcast === false ? () => Promise.resolve() : () => this.persistence.commit(),
      ({ event, seq }) => options.broadcast(event, seq),
    );
    this.coalescer = new EventCoalescer((event) => this.gate.hold({ event, seq: this.journal.record(event) }), {
      tailOf: (cellId) => {
        const recorder = this.recorders.get(cellId);
        return recorder ? { elided: recorder.elided, segments: recorder.tailSegments() } : null;
      },
      liveMetricsOf: (cellId) => this.doc.cells.find((cell) => cell.id === cellId)?.liveMetrics ?? null,
    }, options.coalescing);
    this.host = options.host();
    this.kernel = new KernelSession({
      host: this.host,
      hangAfterMs: options.hangAfterMs,
      onLog: options.log,
      onMetric: (message) => this.recordMetric(message),
      onDevicePlan: (message) => this.recordDevicePlan(message),
    });
    this.kernel.onStatus((status) => {
      this.doc.kernel = status;
      if (status.state === "dead") this.persistence.kernelEnded("died", status.reason);
      else if (status.state === "shutdown" && this.stopping) this.persistence.kernelEnded("interrupted", this.stopping.reason);
      else if (status.state === "restarting") this.persistence.kernelEnded("finished", null);
      else if (status.state === "shutdown") this.persistence.kernelEnded("finished", status.reason);
      this.coalescer.emit({ type: "kernel-status", status });
    });
  }

  /**
   * What a joining viewer needs: the events it missed since `resume` if we
   * still have them, else a snapshot — taken now, answered once everything
   * it shows is committed.
   */
  async join(resume?: JournalPosition): Promise<Extract<CommandAck, { ok: true }>> {
    this.coalescer.flush();
    const journal = this.journal.position;
    const missed = resume ? this.journal.since(resume) : null;
    const reply: Extract<CommandAck, { ok: true }> = missed ? { ok: true, missed, journal } : { ok: true, notebook: structuredClone(this.doc), journal };
    await this.gate.durable();
    return reply;
  }

  async handle(command: Exclude<NotebookCommand, { op: "open" }>, by: string): Promise<void> {
    // Checked and held from before anything changes until the kernel counts as live itself, so concurrent starts cannot pass the cap.
    const starts = (command.op === "execute" || command.op === "restart") && startsKernel(command.op, this.kernel.status.state);
    const release = starts ? this.options.claimKernel?.() : undefined;
    try {
      await this.apply(command, by);
    } finally {
      release?.();
    }
  }

  private async apply(command: Exclude<NotebookCommand, { op: "open" }>, by: string): Promise<void> {
    switch (command.op) {
      case "insert-cell": {
        const event = insertCell(this.doc, command.index, newCell(command.cell.id, command.cell.kind, command.cell.source));
        this.coalescer.emit(event);
        await this.persistence.insertCell(event.type === "cell-inserted" ? event.index : command.index, command.cell);
        return;
      }
      case "delete-cell":
        this.coalescer.emit(deleteCell(this.doc, command.cellId));
        this.recorders.delete(command.cellId);
        await this.persistence.deleteCell(command.cellId);
        return;
      case "move-cell": {
        const event = moveCell(this.doc, command.cellId, command.toIndex);
        this.coalescer.emit(event);
        await this.persistence.moveCell(command.cellId, event.type === "cell-moved" ? event.toIndex : command.toIndex);
        return;
      }
      case "set-source": {
        const cell = findCell(this.doc, command.cellId);
        if (cell.source !== command.source) assertEditable(cell);
        const stale = command.baseHash !== undefined && sourceHash(cell.source) !== command.baseHash;
        if (stale && !command.force && cell.source !== command.source) throw new SourceConflictError(cell.id, cell.source);
        if (cell.source === command.source) return;
        this.coalescer.emit(setSource(this.doc, command.cellId, command.source, by));
        await this.persistence.setSource(command.cellId, command.source);
        return;
      }
      case "set-kind":
        for (const event of setKind(this.doc, command.cellId, command.kind)) this.coalescer.emit(event);
        await this.persistence.setKind(command.cellId, command.kind);
        return;
      case "execute":
        this.execute(command.cellIds, command.sourceHashes ?? {});
        return;
      case "clear-outputs":
        for (const cellId of command.cellIds) this.clearOutputs(findCell(this.doc, cellId));
        return;
      case "set-parameters":
        await this.serially(() => this.setParameters(command.cellId, command.values));
        return;
      case "detach-template":
        await this.serially(async () => {
          const cell = findCell(this.doc, command.cellId);
          await this.applyTemplate(cell, cell.source, { ...attachedTemplate(cell), detached: true });
        });
        return;
      case "reattach-template":
        await this.serially(() => this.reattach(command.cellId));
        return;
      case "commit-prediction":
        await this.commitPrediction(command.questionId, command.choice);
        return;
      case "interrupt":
        this.kernel.interrupt();
        return;
      case "restart":
        await this.kernel.restart();
        return;
      case "shutdown":
        await this.kernel.shutdown();
        return;
      default:
        assertNever(command);
    }
  }

  async rename(title: string): Promise<void> {
    this.doc.title = title;
    this.coalescer.emit({ type: "notebook-renamed", title });
    await this.persistence.rename(title);
  }

  markDeleted(deleted: boolean): void {
    this.doc.deleted = deleted;
    this.coalescer.emit({ type: deleted ? "notebook-deleted" : "notebook-restored" });
  }

  /**
   * The lab server is stopping: the kernel is stopped, its running cell and
   * run are stored as interrupted with `reason`, and viewers are sent
   * everything up to the cell's end, after it is stored.
   */
  async dispose(reason = "lab server stopped"): Promise<void> {
    this.stopping = { reason };
    await this.kernel.shutdown(reason, { runningStatus: "interrupted" });
    this.coalescer.flush();
    await this.gate.durable();
    this.coalescer.dispose();
    this.gate.close();
    await this.persistence.flush();
  }

  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.templateWork.then(work);
    this.templateWork = next.catch(() => undefined);
    return next;
  }

  /** Validated by the catalog with the scenario's other values; all attached cells of the scenario re-render, or none. */
  private async setParameters(cellId: string, values: Record<string, ParameterValue>): Promise<void> {
    // Names, types, ranges and cross-parameter limits are the catalog's to check (it refuses, nothing changes).
    const template = attachedTemplate(findCell(this.doc, cellId));
    const merged = { ...template.parameters, ...values };
    const targets = attachedSiblings(this.doc, scenarioOf(template.id));
    const templates = this.options.templates ?? NO_TEMPLATES;
    const rendered = await Promise.all(targets.map((cell) => templates.render(cell.template.id, merged)));
    await Promise.all(
      targets.map((cell, i) => (this.doc.cells.includes(cell) && cell.template?.detached === false ? this.applyTemplate(cell, rendered[i]!.source, rendered[i]!.template) : undefined)),
    );
  }

  /** Re-renders a detached cell from the catalog; refuses (nothing changes) when the catalog cannot render it. */
  private async reattach(cellId: string): Promise<void> {
    const cell = findCell(this.doc, cellId);
    if (!cell.template) throw new CommandError(`cell ${cell.id} is not rendered from a template`);
    // An answer of ok must mean the code now comes from the catalog.
    if (!cell.template.detached) throw new CommandError(`cell ${cell.id} is already attached to template ${cell.template.id}; there is nothing to reattach`);
    const templateId = cell.template.id;
    const sibling = attachedSiblings(this.doc, scenarioOf(templateId))[0];
    const values = sibling?.template.parameters ?? cell.template.parameters;
    const rendered = await (this.options.templates ?? NO_TEMPLATES).render(templateId, values).catch((error: unknown) => {
      // The template may be unknown to this catalog or its values invalid (an imported file's claim): say which cell and why.
      throw error instanceof CommandError ? new CommandError(`cell ${cell.id} cannot be reattached to template ${templateId}: ${error.message}`) : error;
    });
    if (this.doc.cells.includes(cell)) await this.applyTemplate(cell, rendered.source, rendered.template);
  }

  private async applyTemplate(cell: Cell, source: string, template: CellTemplate): Promise<void> {
    cell.source = source;
    cell.template = template;
    this.coalescer.emit({ type: "cell-template", cellId: cell.id, template, source });
    await this.persistence.setTemplate(cell.id, source, template);
  }

  private async commitPrediction(questionId: string, choice: string): Promise<void> {
    const question = findQuestion(this.doc, questionId);
    if (!question.choices.includes(choice)) throw new CommandError(`"${choice.slice(0, 80)}" is not one of the choices of ${questionId}`);
    const existing = this.doc.predictions[questionId];
    if (existing) throw new CommandError(`a prediction for ${questionId} was already committed (${existing.choice}); predictions are kept as committed`);
    const afterRun = questionAlreadyRun(this.doc, questionId);
    const prediction = await this.persistence.commitPrediction({ questionId, question: question.text, choice, afterRun });
    this.doc.predictions[questionId] = prediction;
    this.coalescer.emit({ type: "prediction-committed", prediction });
  }

  /** Runs the stored sources; a cell whose text is not the one the user sees (`sourceHashes`) is a conflict. */
  private execute(cellIds: string[], sourceHashes: Record<string, string>): void {
    const cells = cellIds.map((cellId) => findCell(this.doc, cellId));
    const busy = cells.find((cell) => cell.runState !== "idle");
    if (busy) throw new CommandError(`cell ${busy.id} is already queued or running`);
    for (const cell of cells) {
      const seen = sourceHashes[cell.id];
      // Checked for every cell before anything runs.
      if (seen !== undefined && seen !== sourceHash(cell.source)) throw new SourceConflictError(cell.id, cell.source);
    }
    for (const cell of cells) {
      if (cell.kind !== "code") continue;
      this.setRunState(cell, "queued");
      this.kernel.execute(cell.source, this.sinkFor(cell));
    }
  }

  private sinkFor(cell: Cell): ExecutionSink {
    let record: ExecutionRecord | null = null;
    return {
      started: () => {
        this.clearOutputs(cell, { persist: false });
        this.recorders.set(cell.id, new OutputRecorder(this.options.outputBudget));
        cell.liveMetrics = null;
        cell.executionId = randomUUID();
        this.metricsCell = cell;
        const status = this.kernel.status;
        if ("info" in status) {
          const execution = { id: cell.executionId, cellId: cell.id, source: cell.source, template: cell.template };
          record = this.persistence.executionStarted(execution, { info: status.info, host: this.host.id });
          this.liveRecord = record;
        }
        this.setRunState(cell, "running");
      },
      console: (text) => this.recordStream(cell, "stdout", text, record),
      output: (message) => {
        if (message.type === "stream") this.recordStream(cell, message.name, message.text, record);
        else this.recordOutput(cell, toCellOutput(message), record);
      },
      hang: (report) => this.recordOutput(cell, hangOutput(report), record),
      finished: ({ status, executionCount, durationMs }) => {
        this.coalescer.flush();
        if (this.liveRecord === record) this.liveRecord = null;
        if (executionCount !== null) cell.executionCount = executionCount;
        cell.lastRun = { status, durationMs };
        record?.finished({ status, durationMs, executionCount: cell.executionCount, outputs: cell.outputs });
        this.setRunState(cell, "idle");
        this.coalescer.emit({ type: "cell-finished", cellId: cell.id, status, durationMs });
      },
    };
  }

  private recordStream(cell: Cell, name: "stdout" | "stderr", text: string, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cell);
    for (const change of recorder.stream(name, text)) {
      if (change.kind === "append") {
        this.coalescer.append(cell.id, change.name, change.text);
        record?.output({ kind: "stream", name: change.name, text: change.text });
      } else if (change.kind === "tail") {
        this.coalescer.tailChanged(cell.id);
        // What viewers are shown of the tail is stored too, read when the commit happens.
        record?.tailChanged(() => ({ elidedBytes: recorder.elided, segments: recorder.tailSegments() }));
      }
    }
    cell.outputs = recorder.outputs();
  }

  private recordOutput(cell: Cell, output: CellOutput, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cell);
    this.coalescer.flush(); // the viewer's tail must match the recorder's before it is frozen
    for (const change of recorder.output(output)) {
      if (change.kind !== "frozen") continue;
      // The tail becomes part of the log, in place, before the rich output.
      if (change.elided > 0) record?.output({ kind: "elided", elidedBytes: change.elided });
      for (const segment of change.segments) record?.output({ kind: "stream", name: segment.name, text: segment.text });
      record?.tailChanged(() => null);
    }
    cell.outputs = recorder.outputs();
    record?.output(output);
    this.coalescer.emit({ type: "cell-output", cellId: cell.id, output });
  }

  private recordMetric(message: KernelMessageOf<"metric">): void {
    const point = { rank: message.rank, step: message.step, values: message.values };
    const tag = message.runId ?? "";
    const cell = this.metricsCell;
    if (cell && this.doc.cells.includes(cell)) {
      cell.liveMetrics = mergeLiveMetrics(cell.liveMetrics, point);
      this.coalescer.metricsChanged(cell.id);
      if (cell.executionId) this.coalescer.metricPoint(cell.id, cell.executionId, { tag, ...point });
    }
    this.persistence.metrics([{ ...point, tag, executionId: cell?.executionId ?? "" }]);
    this.liveRecord?.heard();
  }

  /** What a variant of the running cell ran on: stored with the execution, and told to the charts live. */
  private recordDevicePlan(message: KernelMessageOf<"device_plan">): void {
    const cell = this.metricsCell;
    if (!cell || !cell.executionId || !this.doc.cells.includes(cell)) return;
    const tag = message.runId ?? "";
    this.liveRecord?.devicePlan(tag, message.plan);
    this.coalescer.emit({ type: "cell-device-plan", cellId: cell.id, executionId: cell.executionId, tag, plan: message.plan });
  }

  private recorderOf(cell: Cell): OutputRecorder {
    let recorder = this.recorders.get(cell.id);
    if (!recorder) {
      recorder = new OutputRecorder(this.options.outputBudget);
      this.recorders.set(cell.id, recorder);
    }
    return recorder;
  }

  private clearOutputs(cell: Cell, { persist } = { persist: true }): void {
    this.recorders.delete(cell.id);
    cell.outputs = [];
    if (persist) this.persistence.clearOutputs(cell.id);
    this.coalescer.emit({ type: "cell-outputs-cleared", cellId: cell.id });
  }

  private setRunState(cell: Cell, runState: Cell["runState"]): void {
    cell.runState = runState;
    this.coalescer.emit({ type: "cell-run-state", cellId: cell.id, runState, executionCount: cell.executionCount, executionId: cell.executionId });
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


export type { LiveMetrics };
