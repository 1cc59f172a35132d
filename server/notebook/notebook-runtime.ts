/**
 * One open notebook: its document, its kernel session, and the translation
 * from kernel output to notebook events for every viewer and to database
 * writes. Commands arrive already validated; each is checked against the
 * document (notebook-ops.ts, template-cells.ts) and either becomes events,
 * saved and broadcast, or throws a CommandError.
 *
 * One reducer: the document changes only by applying an event with the
 * reducer every viewer runs (core/notebook/notebook-state.ts), at the moment
 * the event is numbered, so a joining viewer's snapshot is exactly what the
 * live viewers were shown. Nothing here holds a cell object across events:
 * cells are looked up by id in the current document.
 *
 * Durable before visible: every event is numbered when it happens but sent
 * to viewers only once the writes queued before it are committed
 * (DurabilityGate), and a joining viewer's snapshot is answered only then.
 */
import { randomUUID } from "node:crypto";
import { applyServerEvent, newCell } from "../core/notebook/notebook-state";
import type { Cell, CellOutput, CellTemplate, KernelInfo, KernelSpec, LiveMetrics, NotebookDocument, ParameterValue } from "../core/protocol/notebook-model";
import type { KernelMessageOf } from "../core/protocol/kernel-messages";
import { toCodePoints, toUtf16, type CompletionAnswer, type InspectionAnswer } from "../core/protocol/assist-model";
import type { JournalPosition, NotebookCommand, NotebookEvent } from "../core/protocol/socket-api";
import type { DriverReply } from "../core/protocol/ops-notebook";
import { sourceHash } from "../core/protocol/source-hash";
import { assertNever } from "../core/assert-never";
import { KernelSession, type ExecutionOutput, type ExecutionSink, type HangReport, type KernelLaunch } from "../kernel/kernel-session";
import { EventCoalescer, type CoalescerOptions } from "./event-coalescer";
import { DurabilityGate } from "./durability-gate";
import { EventJournal } from "./event-journal";
import { checkKernelSpec, type KernelHosts } from "./kernel-hosts";
import { startsKernel } from "./kernel-policy";
import { NO_PERSISTENCE, mergeLiveMetrics, type ExecutionRecord, type NotebookPersistence, type RunKernel } from "./notebook-persistence";
import { CommandError, SourceConflictError } from "../errors";
import { deleteCell, findCell, insertCell, moveCell, setKind, setSource } from "./notebook-ops";
import { preloadModules } from "./kernel-preload";
import { OutputRecorder, type OutputBudget } from "./output-recorder";
import { ReattachUndo } from "./reattach-undo";
import {
  assertEditable,
  attachedSiblings,
  attachedTemplate,
  findQuestion,
  NO_TEMPLATES,
  questionAlreadyRun,
  scenarioOf,
  staleExperimentCells,
  type TemplateRenderer,
} from "./template-cells";
import type { Log } from "../logger";

export interface NotebookRuntimeOptions {
  /** Where kernels may run: the document's kernel spec picks one at each kernel start. */
  hosts: KernelHosts;
  broadcast: (event: NotebookEvent, seq: number) => void;
  persistence?: NotebookPersistence;
  outputBudget?: OutputBudget;
  coalescing?: CoalescerOptions;
  /** Re-renders templated cells (the scenario catalog); without it, forms are refused. */
  templates?: TemplateRenderer;
  /** A busy cell silent for this long gets a hang report (KernelSession's default when unset). */
  hangAfterMs?: number;
  log?: Log;
  /** A place under the server's kernel cap before this notebook starts a kernel (throws at the cap); returns its release. */
  claimKernel?: () => () => void;
}

/** What a command is told while this server lets its notebooks go (a stop, or another server taking over). */
export const LEAVING = "this lab server is letting the notebook go (it is stopping): nothing was changed; try again in a moment";

export class NotebookRuntime {
  readonly kernel: KernelSession;
  private readonly recorders = new Map<string, OutputRecorder>();
  private readonly coalescer: EventCoalescer;
  private readonly journal = new EventJournal();
  private readonly gate: DurabilityGate<{ event: NotebookEvent; seq: number }>;
  private readonly persistence: NotebookPersistence;
  /** The running execution's record (of `metricsTarget`'s cell): metrics count as hearing from it. */
  private liveRecord: ExecutionRecord | null = null;
  /** Set while the lab server stops: how the kernel run and its running cell are stored. */
  private stopping: { reason: string } | null = null;
  /** Set when the runtime is disposed or detached: commands are refused from then on. */
  private leaving = false;
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
  /** Form changes render asynchronously; one at a time, so each starts from the values the last one left. */
  private templateWork: Promise<unknown> = Promise.resolve();
  /** What each reattach replaced, for its Undo. */
  private readonly reattachUndo = new ReattachUndo();

  private document: NotebookDocument;

  constructor(doc: NotebookDocument, private readonly options: NotebookRuntimeOptions) {
    this.document = doc;
    this.persistence = options.persistence ?? NO_PERSISTENCE;
    this.gate = new DurabilityGate(() => this.commitAndAcknowledge(), ({ event, seq }) => options.broadcast(event, seq));
    this.coalescer = new EventCoalescer((event) => this.publish(event), {
      tailOf: (cellId) => {
        const recorder = this.recorders.get(cellId);
        return recorder ? { elided: recorder.elided, segments: recorder.tailSegments(), headOutputs: recorder.headOutputs } : null;
      },
      liveMetricsOf: (cellId) => (this.metricsTarget?.cellId === cellId ? this.metricsTarget.live : null),
    }, options.coalescing);
    this.kernel = new KernelSession({
      launch: () => this.launchSpec(),
      hangAfterMs: options.hangAfterMs,
      onLog: options.log,
      onMetric: (message) => this.recordMetric(message),
      onDevicePlan: (message) => this.recordDevicePlan(message),
      preload: () => preloadModules(this.doc.cells.map((cell) => cell.template?.id ?? null)),
    });
    this.kernel.onStatus((status) => {
      if (status.state !== "idle" && status.state !== "busy" && status.state !== "interrupting") this.ranInKernel.clear();
      if (status.state === "dead") this.persistence.kernelEnded("died", status.reason);
      // Refused before it started (the server's kernel cap, a GPU queue): a run stored for cells taken meanwhile ends, saying why.
      else if (status.state === "refused") this.persistence.kernelEnded("interrupted", status.reason);
      else if (status.state === "shutdown" && this.stopping) this.persistence.kernelEnded("interrupted", this.stopping.reason);
      else if (status.state === "restarting") this.persistence.kernelEnded("finished", null);
      else if (status.state === "shutdown") this.persistence.kernelEnded("finished", status.reason);
      this.coalescer.emit({ type: "kernel-status", status });
    });
    this.persistence.readKernelPositionFrom(() => this.kernel.processedSeq);
  }

  /** The kernel spec as it is now: a restart after set-kernel-spec starts where it says. */
  private launchSpec(): KernelLaunch {
    const spec = this.doc.kernelSpec;
    const host = this.options.hosts.launcher(spec.hostId);
    if (!host) {
      throw new Error(`this notebook's kernel host "${spec.hostId}" is no longer configured (the lab's hosts: ${this.options.hosts.ids().join(", ")}); choose another under Kernel in the header`);
    }
    return { host, gpus: spec.gpus, notebookId: this.doc.id };
  }

  /** Stores what the kernel's output produced so far, then tells its host agent it may drop that output. */
  private async commitAndAcknowledge(): Promise<void> {
    const position = this.kernel.processedSeq;
    await this.persistence.commit();
    this.kernel.acknowledge(position);
  }

  /**
   * Takes over this notebook's kernel from the previous lab server: the run
   * goes on, a cell that was running keeps running and shows everything it
   * printed meanwhile, and nothing stored is shown twice. False when the
   * kernel is gone (the caller ends the run).
   */
  async resume(run: {
    id: string;
    hostId: string;
    agentKernelId: string;
    agentSeq: number;
    info: KernelInfo;
    running: { id: string; cellId: string; outputs: CellOutput[]; executionCount: number | null; startedAt: Date | null } | null;
    /** Cells the previous server had queued behind it (stored when queued): they run here next, in order. */
    queued?: Array<{ id: string; cellId: string; source: string }>;
  }): Promise<boolean> {
    const host = this.options.hosts.launcher(run.hostId);
    if (!host) return false;
    this.persistence.runResumed(run.id);
    let sink: ExecutionSink | null = null;
    const running = run.running;
    const cell = running ? this.cellOf(running.cellId) : undefined;
    if (running && cell) {
      const record = this.persistence.executionResumed(running.id, running.cellId);
      const recorder = new OutputRecorder(this.options.outputBudget);
      // The stored outputs are the cell's: the recorder picks up its budget where it was.
      for (const output of running.outputs) {
        if (output.kind === "stream") recorder.stream(output.name, output.text);
        else recorder.output(output);
      }
      this.coalescer.emit({ type: "cell-outputs-cleared", cellId: cell.id });
      for (const output of running.outputs) this.coalescer.emit({ type: "cell-output", cellId: cell.id, output });
      this.recorders.set(cell.id, recorder);
      this.metricsTarget = { cellId: cell.id, executionId: running.id, live: null, inDocument: true };
      this.liveRecord = record;
      this.setRunState(cell.id, "running", { executionId: running.id, executionCount: running.executionCount });
      sink = this.sinkFor(cell.id, running.id, sourceHash(cell.source), record);
    }
    // Shown queued from the first moment the runtime is seen, as on the previous server: a page that opens while
    // the kernel is being taken over must not show them idle, as if their run had ended.
    const queued = run.queued ?? [];
    for (const execution of queued) if (this.cellOf(execution.cellId)) this.setRunState(execution.cellId, "queued");
    const resumed = await this.kernel.resume(host, run.agentKernelId, run.agentSeq, run.info, sink && running ? { executionId: running.id, sink, startedAt: running.startedAt } : null);
    if (!resumed && cell) {
      this.liveRecord = null;
      this.setRunState(cell.id, "idle");
    }
    if (resumed) this.requeue(queued);
    else for (const execution of queued) if (this.cellOf(execution.cellId)?.runState === "queued") this.setRunState(execution.cellId, "idle");
    return resumed;
  }

  /** The previous server's queue, taken over (its cells already shown queued): each runs the code it was asked to run, under its stored execution. */
  private requeue(queued: Array<{ id: string; cellId: string; source: string }>): void {
    for (const execution of queued) {
      const cell = this.cellOf(execution.cellId);
      this.persistence.executionQueued({ id: execution.id, cellId: execution.cellId, source: execution.source, template: cell?.template ?? null }, { stored: true });
      if (!cell) {
        // Deleted meanwhile: nothing to run it in.
        this.persistence.queuedExecutionEnded(execution.id, { status: "aborted", executionCount: null, outputs: [] });
        continue;
      }
      if (cell.runState !== "queued") this.setRunState(cell.id, "queued");
      this.kernel.execute(execution.source, this.sinkFor(cell.id, execution.id, sourceHash(execution.source)), { cellId: cell.id, executionId: execution.id });
    }
  }

  /** The document as of the last event numbered; never changed in place (the reducer makes a new one per change). */
  get doc(): NotebookDocument {
    return this.document;
  }

  /**
   * What a joining viewer needs: the events it missed since `resume` if we
   * still have them, else a snapshot — taken now, answered once everything
   * it shows is committed.
   */
  async join(resume?: JournalPosition): Promise<DriverReply<"open">> {
    this.coalescer.flush();
    const journal = this.journal.position;
    const missed = resume ? this.journal.since(resume) : null;
    // The current document is the snapshot as it is: later events make new documents, they do not change this one.
    const reply: DriverReply<"open"> = missed ? { ok: true, missed, journal } : { ok: true, notebook: this.doc, journal };
    await this.gate.durable();
    return reply;
  }

  /** Tab in a cell's editor: the kernel's completions, offsets converted between the editor's UTF-16 and Python's code points. */
  async complete(code: string, cursor: number): Promise<CompletionAnswer> {
    const unavailable = this.assistUnavailable();
    if (unavailable !== null) return unavailable;
    const reply = await this.kernel.complete(code, toCodePoints(code, cursor));
    if (reply === null) return { status: "unavailable", reason: "the kernel did not answer in time" };
    return { status: "ok", matches: reply.matches, from: toUtf16(code, reply.cursorStart), to: toUtf16(code, reply.cursorEnd) };
  }

  /** Shift+Tab: signature and docstring at the cursor. */
  async inspect(code: string, cursor: number, detail: boolean): Promise<InspectionAnswer> {
    const unavailable = this.assistUnavailable();
    if (unavailable !== null) return unavailable;
    const reply = await this.kernel.inspect(code, toCodePoints(code, cursor), detail);
    if (reply === null) return { status: "unavailable", reason: "the kernel did not answer in time" };
    return { status: "ok", found: reply.found, text: reply.text };
  }

  /** Completion never starts a kernel, and never waits behind a running cell. */
  private assistUnavailable(): { status: "unavailable"; reason: string } | null {
    const state = this.kernel.status.state;
    if (state === "idle") return null;
    return { status: "unavailable", reason: state === "busy" || state === "interrupting" ? "the kernel is running a cell" : `the kernel is ${state}` };
  }

  async handle(command: Exclude<NotebookCommand, { op: "open" | "presence" | "complete" | "inspect" }>, by: string): Promise<void> {
    // Once this server lets the notebook go, nothing more is taken: a change accepted now could be answered
    // and never stored (its writes would come after the last flush).
    if (this.leaving) throw new CommandError("unavailable", LEAVING);
    // Checked and held from before anything changes until the kernel counts as live itself, so concurrent starts cannot pass the cap.
    const starts = (command.op === "execute" || command.op === "restart") && startsKernel(command.op, this.kernel.status.state);
    const release = starts ? this.options.claimKernel?.() : undefined;
    try {
      await this.apply(command, by);
    } finally {
      release?.();
    }
  }

  private async apply(command: Exclude<NotebookCommand, { op: "open" | "presence" | "complete" | "inspect" }>, by: string): Promise<void> {
    switch (command.op) {
      case "insert-cell": {
        const event = insertCell(this.doc, command.index, newCell(command.cell.id, command.cell.kind, command.cell.source));
        this.coalescer.emit(event);
        await this.persistence.insertCell(event.index, command.cell);
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
        await this.persistence.moveCell(command.cellId, event.toIndex);
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
        for (const cellId of command.cellIds) this.clearOutputs(findCell(this.doc, cellId).id);
        return;
      case "set-parameters":
        await this.serially(() => this.setParameters(command.cellId, command.values));
        return;
      case "detach-template":
        await this.serially(async () => {
          const cell = findCell(this.doc, command.cellId);
          await this.applyTemplate(cell.id, cell.source, { ...attachedTemplate(cell), detached: true });
        });
        return;
      case "reattach-template":
        await this.serially(() => this.reattach(command.cellId));
        return;
      case "undo-reattach":
        await this.serially(async () => {
          const replaced = this.reattachUndo.take(this.doc, command.cellId);
          await this.applyTemplate(command.cellId, replaced.source, replaced.template);
        });
        return;
      case "commit-prediction":
        await this.commitPrediction(command.questionId, command.choice);
        return;
      case "interrupt":
        this.kernel.interrupt();
        return;
      case "set-kernel-spec":
        await this.setKernelSpec({ hostId: command.hostId, gpus: command.gpus });
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

  /**
   * Starts the kernel before any cell asks for it (a workshop's seats ahead
   * of its start time), under the server's kernel cap like any start. A
   * kernel that is live, or dead (restarted on purpose only), is left as it is.
   */
  async startKernel(): Promise<void> {
    if (!startsKernel("execute", this.kernel.status.state)) return;
    const release = this.options.claimKernel?.();
    try {
      await this.kernel.ensureStarted();
    } finally {
      release?.();
    }
  }

  async rename(title: string): Promise<void> {
    this.coalescer.emit({ type: "notebook-renamed", title });
    await this.persistence.rename(title);
  }

  /** Checked against the lab's hosts; takes effect at the next kernel start (a running kernel keeps its host and GPUs). */
  private async setKernelSpec(spec: KernelSpec): Promise<void> {
    checkKernelSpec(this.options.hosts, spec);
    const current = this.doc.kernelSpec;
    if (current.hostId === spec.hostId && current.gpus === spec.gpus) return;
    this.coalescer.emit({ type: "kernel-spec-changed", spec });
    await this.persistence.setKernelSpec(spec);
  }

  markDeleted(deleted: boolean): void {
    this.coalescer.emit({ type: deleted ? "notebook-deleted" : "notebook-restored" });
  }

  /**
   * The lab server is stopping: the kernel is stopped, its running cell and
   * run are stored as interrupted with `reason`, and viewers are sent
   * everything up to the cell's end, after it is stored.
   */
  async dispose(reason = "lab server stopped"): Promise<void> {
    this.leaving = true;
    this.stopping = { reason };
    await this.kernel.shutdown(reason, { runningStatus: "interrupted" });
    this.coalescer.flush();
    await this.gate.durable();
    this.coalescer.dispose();
    this.gate.close();
    await this.persistence.flush();
  }

  /**
   * The lab server stops but the kernel lives on with its host agent: what
   * viewers were shown is stored, the run stays "running", and the next
   * server takes the kernel over (resume) from the stored read position.
   */
  async detach(): Promise<void> {
    this.leaving = true;
    this.coalescer.flush();
    await this.gate.durable();
    this.coalescer.dispose();
    this.gate.close();
    await this.persistence.flush();
  }

  /** Idle shutdown will end the kernel at `shutdownAt` (null: not any more): every viewer is told. */
  warnIdle(shutdownAt: number | null): void {
    this.coalescer.emit({ type: "kernel-idle-warning", shutdownAt: shutdownAt === null ? null : new Date(shutdownAt).toISOString() });
  }

  /** Whether the kernel lives with a host agent (and so can outlive this server). */
  get kernelOutlivesServer(): boolean {
    return this.kernel.placement?.agentKernelId != null;
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
    // Rendering took a while: a cell deleted or detached meanwhile is left as it is now.
    await Promise.all(
      targets.map((target, i) => (this.cellOf(target.id)?.template?.detached === false ? this.applyTemplate(target.id, rendered[i]!.source, rendered[i]!.template) : undefined)),
    );
  }

  /** Re-renders a detached cell from the catalog; refuses (nothing changes) when the catalog cannot render it. */
  private async reattach(cellId: string): Promise<void> {
    const cell = findCell(this.doc, cellId);
    if (!cell.template) throw new CommandError("invalid", `cell ${cell.id} is not rendered from a template`);
    // An answer of ok must mean the code now comes from the catalog.
    if (!cell.template.detached) throw new CommandError("conflict", `cell ${cell.id} is already attached to template ${cell.template.id}; there is nothing to reattach`);
    const templateId = cell.template.id;
    const sibling = attachedSiblings(this.doc, scenarioOf(templateId))[0];
    const values = sibling?.template.parameters ?? cell.template.parameters;
    const rendered = await (this.options.templates ?? NO_TEMPLATES).render(templateId, values).catch((error: unknown) => {
      // The template may be unknown to this catalog or its values invalid (an imported file's claim): say which cell and why.
      throw error instanceof CommandError ? new CommandError(error.code, `cell ${cell.id} cannot be reattached to template ${templateId}: ${error.message}`) : error;
    });
    const current = this.cellOf(cell.id);
    if (!current?.template) return;
    this.reattachUndo.remember(cell.id, { source: current.source, template: current.template });
    await this.applyTemplate(cell.id, rendered.source, rendered.template);
  }

  private async applyTemplate(cellId: string, source: string, template: CellTemplate): Promise<void> {
    this.coalescer.emit({ type: "cell-template", cellId, template, source });
    await this.persistence.setTemplate(cellId, source, template);
  }

  private async commitPrediction(questionId: string, choice: string): Promise<void> {
    const question = findQuestion(this.doc, questionId);
    if (!question.choices.includes(choice)) throw new CommandError("invalid", `"${choice.slice(0, 80)}" is not one of the choices of ${questionId}`);
    const existing = this.doc.predictions[questionId];
    if (existing) throw new CommandError("conflict", `a prediction for ${questionId} was already committed (${existing.choice}); predictions are kept as committed`);
    const afterRun = questionAlreadyRun(this.doc, questionId);
    const prediction = await this.persistence.commitPrediction({ questionId, question: question.text, choice, afterRun });
    this.coalescer.emit({ type: "prediction-committed", prediction });
  }

  /**
   * Runs the stored sources; a cell whose text is not the one the user sees
   * (`sourceHashes`) is a conflict. A scenario's verdicts cell first queues the
   * experiment cells whose evidence this kernel does not have for the values
   * shown: they run visibly, under their own cells, before the verdicts.
   */
  private execute(cellIds: string[], sourceHashes: Record<string, string>): void {
    const asked = cellIds.map((cellId) => findCell(this.doc, cellId));
    const cells: Cell[] = [];
    for (const cell of asked) {
      const stale = staleExperimentCells(this.doc, cell, (other) => this.ranInKernel.get(other.id) === sourceHash(other.source));
      cells.push(...stale.filter((other) => !cells.includes(other) && !asked.includes(other)), cell);
    }
    const busy = cells.find((cell) => cell.runState !== "idle");
    if (busy) throw new CommandError("busy", `cell ${busy.id} is already queued or running`);
    for (const cell of cells) {
      const seen = sourceHashes[cell.id];
      // Checked for every cell before anything runs.
      if (seen !== undefined && seen !== sourceHash(cell.source)) throw new SourceConflictError(cell.id, cell.source);
    }
    for (const cell of cells) {
      if (cell.kind !== "code") continue;
      this.setRunState(cell.id, "queued");
      // The id is the stored execution's: what the kernel records evidence under is what the charts read.
      const executionId = randomUUID();
      this.persistence.executionQueued({ id: executionId, cellId: cell.id, source: cell.source, template: cell.template }, { kernel: this.runKernel() });
      this.kernel.execute(cell.source, this.sinkFor(cell.id, executionId, sourceHash(cell.source)), { cellId: cell.id, executionId });
    }
  }

  /** The kernel a run is stored on, as far as it is known (before it is up: where it is being started). */
  private runKernel(): RunKernel {
    const status = this.kernel.status;
    const placement = this.kernel.placement;
    return {
      info: "info" in status ? status.info : null,
      host: this.kernel.host?.id ?? this.doc.kernelSpec.hostId,
      agent: placement?.agentKernelId ? { hostId: placement.hostId, agentKernelId: placement.agentKernelId } : null,
    };
  }

  /** `resumedRecord`: the execution was already running under the previous server (no start). */
  private sinkFor(cellId: string, executionId: string, ranSourceHash: string, resumedRecord: ExecutionRecord | null = null): ExecutionSink {
    let record: ExecutionRecord | null = resumedRecord;
    return {
      started: () => {
        this.clearOutputs(cellId, { persist: false });
        this.recorders.set(cellId, new OutputRecorder(this.options.outputBudget));
        this.metricsTarget = { cellId, executionId, live: null, inDocument: true };
        const cell = this.cellOf(cellId);
        const status = this.kernel.status;
        if ("info" in status && cell) {
          const execution = { id: executionId, cellId, source: cell.source, template: cell.template };
          record = this.persistence.executionStarted(execution, { ...this.runKernel(), info: status.info });
          this.liveRecord = record;
        }
        // Starting clears the previous run's live metrics too (the reducer's rule for a run that starts).
        this.setRunState(cellId, "running", { executionId });
      },
      console: (text) => this.recordStream(cellId, "stdout", text, record),
      output: (message) => {
        if (message.type === "stream") this.recordStream(cellId, message.name, message.text, record);
        else this.recordOutput(cellId, toCellOutput(message), record);
      },
      hang: (report) => this.recordOutput(cellId, hangOutput(report), record),
      finished: ({ status, executionCount, durationMs }) => {
        this.coalescer.flush(); // the document now has every output the viewers were sent
        if (status === "ok") this.ranInKernel.set(cellId, ranSourceHash);
        else this.ranInKernel.delete(cellId);
        if (this.liveRecord === record) this.liveRecord = null;
        const cell = this.cellOf(cellId);
        const count = executionCount ?? cell?.executionCount ?? null;
        record?.finished({ status, durationMs, executionCount: count, outputs: cell?.outputs ?? [] });
        // Ended before it started (aborted in the queue): stored as this cell's last execution when it was stored as queued.
        const endedQueued = record === null && this.persistence.queuedExecutionEnded(executionId, { status, executionCount: count, outputs: cell?.outputs ?? [] });
        this.setRunState(cellId, "idle", { executionCount: count, ...(endedQueued ? { executionId } : {}) });
        this.coalescer.emit({ type: "cell-finished", cellId, status, durationMs });
      },
    };
  }

  /** Stream text goes through the output budget; viewers (and so the document) get it coalesced. */
  private recordStream(cellId: string, name: "stdout" | "stderr", text: string, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cellId);
    for (const change of recorder.stream(name, text)) {
      if (change.kind === "append") {
        this.coalescer.append(cellId, change.name, change.text);
        record?.output({ kind: "stream", name: change.name, text: change.text });
      } else if (change.kind === "tail") {
        // Registered now, read when the batch is written (not per chunk): a write cut after this chunk stores a tail that has it.
        if (record) record.tailChanged(() => ({ elidedBytes: recorder.elided, segments: recorder.tailSegments() }));
        this.coalescer.tailChanged(cellId);
      }
    }
  }

  private recordOutput(cellId: string, output: CellOutput, record: ExecutionRecord | null): void {
    const recorder = this.recorderOf(cellId);
    this.coalescer.flush(); // the viewer's tail must match the recorder's before it is frozen
    for (const change of recorder.output(output)) {
      if (change.kind === "frozen") {
        // The tail becomes part of the log, in place, before the rich output.
        if (change.elided > 0) record?.output({ kind: "elided", elidedBytes: change.elided });
        for (const segment of change.segments) record?.output({ kind: "stream", name: segment.name, text: segment.text });
        record?.tailChanged(() => null);
      } else if (change.kind === "output") {
        // What the recorder kept of it (all of it, unless the budget bounds rich outputs).
        record?.output(change.output);
        this.coalescer.emit({ type: "cell-output", cellId, output: change.output });
      }
    }
  }

  private recordMetric(message: KernelMessageOf<"metric">): void {
    const point = { rank: message.rank, step: message.step, values: message.values };
    const tag = message.runId ?? "";
    const target = this.metricsTarget;
    if (target?.inDocument) {
      target.live = mergeLiveMetrics(target.live, point);
      this.coalescer.metricsChanged(target.cellId);
      this.coalescer.metricPoint(target.cellId, target.executionId, { tag, ...point });
    }
    this.persistence.metrics([{ ...point, tag, executionId: target?.executionId ?? "" }]);
    this.liveRecord?.heard();
  }

  /** What a variant of the running cell ran on: stored with the execution, and told to the charts live. */
  private recordDevicePlan(message: KernelMessageOf<"device_plan">): void {
    const target = this.metricsTarget;
    if (!target?.inDocument) return;
    const tag = message.runId ?? "";
    this.liveRecord?.devicePlan(tag, message.plan);
    this.coalescer.emit({ type: "cell-device-plan", cellId: target.cellId, executionId: target.executionId, tag, plan: message.plan });
  }

  private recorderOf(cellId: string): OutputRecorder {
    let recorder = this.recorders.get(cellId);
    if (!recorder) {
      recorder = new OutputRecorder(this.options.outputBudget);
      this.recorders.set(cellId, recorder);
    }
    return recorder;
  }

  private clearOutputs(cellId: string, { persist } = { persist: true }): void {
    this.recorders.delete(cellId);
    if (persist) this.persistence.clearOutputs(cellId);
    this.coalescer.emit({ type: "cell-outputs-cleared", cellId });
  }

  /** The cell's run state, with its execution count and id as they are unless `changes` says otherwise. */
  private setRunState(cellId: string, runState: Cell["runState"], changes: { executionCount?: number | null; executionId?: string } = {}): void {
    const cell = this.cellOf(cellId);
    const executionCount = changes.executionCount !== undefined ? changes.executionCount : (cell?.executionCount ?? null);
    const executionId = changes.executionId ?? cell?.executionId ?? null;
    this.coalescer.emit({ type: "cell-run-state", cellId, runState, executionCount, executionId });
  }

  private cellOf(cellId: string): Cell | undefined {
    return this.doc.cells.find((cell) => cell.id === cellId);
  }

  /**
   * Every change of the document: applied with the one reducer, numbered in
   * the journal, and held until the writes queued before it are committed.
   * The coalescer calls this in order, discrete events after the text before them.
   * A tail snapshot is stored with the commit that releases it (at the tail
   * cadence, not per chunk): the database holds at least what viewers saw.
   */
  private publish(event: NotebookEvent): void {
    // liveRecord records the execution metricsTarget names (both set when a run starts).
    if (event.type === "cell-stream-tail" && this.liveRecord !== null && event.cellId === this.metricsTarget?.cellId) {
      const recorder = this.recorders.get(event.cellId);
      if (recorder) this.liveRecord?.tailChanged(() => ({ elidedBytes: recorder.elided, segments: recorder.tailSegments() }));
    }
    this.document = applyServerEvent(this.document, event);
    if (event.type === "cell-deleted" && this.metricsTarget?.cellId === event.cellId) this.metricsTarget.inDocument = false;
    this.gate.hold({ event, seq: this.journal.record(event) });
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
