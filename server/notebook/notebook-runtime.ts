/**
 * One open notebook: its document, its kernel session, and the translation
 * from kernel output to notebook events for every viewer and to database
 * writes. Commands arrive already validated; each is checked against the
 * document (notebook-commands.ts) and either becomes events, saved and
 * broadcast, or throws a CommandError.
 *
 * This class is the facade its callers use (the hub, the cluster drivers,
 * tests); the jobs live in their parts: what executions produce
 * (execution-recording.ts), taking a kernel over from a previous server
 * (kernel-takeover.ts), templated cells (template-work.ts), the command
 * dispatch (notebook-commands.ts) and completion (assist-answers.ts). It
 * keeps the document, the journal and the durability gate.
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
import { applyServerEvent } from "../core/notebook/notebook-state";
import type { LiveMetrics, NotebookDocument } from "../core/protocol/notebook-model";
import type { CompletionAnswer, InspectionAnswer } from "../core/protocol/assist-model";
import type { JournalPosition, NotebookEvent } from "../core/protocol/socket-api";
import type { DriverReply } from "../core/protocol/ops-notebook";
import { KernelSession, type KernelLaunch } from "../kernel/kernel-session";
import { EventCoalescer, type CoalescerOptions } from "./event-coalescer";
import { DurabilityGate } from "./durability-gate";
import { EventJournal } from "./event-journal";
import type { KernelHosts } from "./kernel-hosts";
import { startsKernel } from "./kernel-policy";
import { NO_PERSISTENCE, type NotebookPersistence } from "./persistence-contract";
import { CommandError } from "../errors";
import { preloadModules } from "./kernel-preload";
import type { OutputBudget } from "./output-recorder";
import type { TemplateRenderer } from "./template-cells";
import type { Log } from "../logger";
import type { RuntimeContext } from "./runtime-context";
import { ExecutionRecording } from "./execution-recording";
import { takeOverKernel, type TakenOverRun } from "./kernel-takeover";
import { TemplateWork } from "./template-work";
import { applyCommand, type AppliedCommand, type CommandParts } from "./notebook-commands";
import { completeIn, inspectIn } from "./assist-answers";

export interface NotebookRuntimeOptions {
  /** Where kernels may run: the document's kernel spec picks one at each kernel start. */
  hosts: KernelHosts;
  broadcast: (event: NotebookEvent, seq: number) => void;
  persistence?: NotebookPersistence;
  outputBudget?: OutputBudget;
  coalescing?: CoalescerOptions;
  /** How long an event that only says a cell is on its way may wait for the cell's end (durability-gate.ts). */
  settleMs?: number;
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
  private readonly coalescer: EventCoalescer;
  private readonly journal = new EventJournal();
  private readonly gate: DurabilityGate<{ event: NotebookEvent; seq: number }>;
  private readonly persistence: NotebookPersistence;
  private readonly recording: ExecutionRecording;
  private readonly commands: CommandParts;
  /** Set while the lab server stops: how the kernel run and its running cell are stored. */
  private stopping: { reason: string } | null = null;
  /** Set when the runtime is disposed or detached: commands are refused from then on. */
  private leaving = false;

  private document: NotebookDocument;

  constructor(doc: NotebookDocument, private readonly options: NotebookRuntimeOptions) {
    this.document = doc;
    const persistence = options.persistence ?? NO_PERSISTENCE;
    this.persistence = persistence;
    this.gate = new DurabilityGate(() => this.commitAndAcknowledge(), ({ event, seq }) => options.broadcast(event, seq), options.settleMs);
    // The recording is made below, after the kernel it reads; these are called only once events and messages flow.
    const coalescer = new EventCoalescer((event) => this.publish(event), {
      tailOf: (cellId) => this.recording.tailOf(cellId),
      liveMetricsOf: (cellId) => this.recording.liveMetricsOf(cellId),
    }, options.coalescing);
    this.coalescer = coalescer;
    this.kernel = new KernelSession({
      launch: () => this.launchSpec(),
      hangAfterMs: options.hangAfterMs,
      onLog: options.log,
      onMetric: (message) => this.recording.recordMetric(message),
      onDevicePlan: (message) => this.recording.recordDevicePlan(message),
      preload: () => preloadModules(this.doc.cells.map((cell) => cell.template?.id ?? null)),
    });
    const current = (): NotebookDocument => this.document;
    const ctx: RuntimeContext = {
      get doc() {
        return current();
      },
      events: coalescer,
      persistence,
    };
    this.recording = new ExecutionRecording(ctx, this.kernel, options.outputBudget);
    this.commands = { ctx, kernel: this.kernel, hosts: options.hosts, recording: this.recording, templates: new TemplateWork(ctx, options.templates) };
    this.kernel.onStatus((status) => {
      if (status.state !== "idle" && status.state !== "busy" && status.state !== "interrupting") this.recording.kernelLeft();
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
  resume(run: TakenOverRun): Promise<boolean> {
    return takeOverKernel({ ...this.commands, kernel: this.kernel }, run);
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

  /**
   * Resolves once everything queued so far is stored, without hurrying the
   * commit (durability-gate.ts): an execute is answered "taken" only once its
   * queued execution is stored, and a quick cell's queued, started and
   * finished states share that one commit.
   */
  settled(): Promise<void> {
    return this.gate.settled();
  }

  /** Tab in a cell's editor: the kernel's completions (never starts a kernel, never waits behind a running cell). */
  complete(code: string, cursor: number): Promise<CompletionAnswer> {
    return completeIn(this.kernel, code, cursor);
  }

  /** Shift+Tab: signature and docstring at the cursor. */
  inspect(code: string, cursor: number, detail: boolean): Promise<InspectionAnswer> {
    return inspectIn(this.kernel, code, cursor, detail);
  }

  async handle(command: AppliedCommand, by: string): Promise<void> {
    // Once this server lets the notebook go, nothing more is taken: a change accepted now could be answered
    // and never stored (its writes would come after the last flush).
    if (this.leaving) throw new CommandError("unavailable", LEAVING);
    // Checked and held from before anything changes until the kernel counts as live itself, so concurrent starts cannot pass the cap.
    const starts = (command.op === "execute" || command.op === "restart") && startsKernel(command.op, this.kernel.status.state);
    const release = starts ? this.options.claimKernel?.() : undefined;
    try {
      await applyCommand(this.commands, command, by);
    } finally {
      release?.();
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
    await this.letGo();
  }

  /**
   * The lab server stops but the kernel lives on with its host agent: what
   * viewers were shown is stored, the run stays "running", and the next
   * server takes the kernel over (resume) from the stored read position.
   */
  async detach(): Promise<void> {
    this.leaving = true;
    await this.letGo();
  }

  /** Everything viewers were sent is stored and sent; then nothing more is numbered, and every write is done. */
  private async letGo(): Promise<void> {
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

  /**
   * Every change of the document: applied with the one reducer, numbered in
   * the journal, and held until the writes queued before it are committed.
   * The coalescer calls this in order, discrete events after the text before them.
   */
  private publish(event: NotebookEvent): void {
    this.recording.published(event);
    this.document = applyServerEvent(this.document, event);
    this.gate.hold({ event, seq: this.journal.record(event) }, settles(event));
  }
}

/**
 * A run's progress (queued, started, what it has shown so far): it may wait a
 * few ms for the run's end (durability-gate.ts, "Settling"). The end, and
 * every other change (edits, the kernel's life), is stored and shown at once.
 */
function settles(event: NotebookEvent): boolean {
  switch (event.type) {
    case "cell-run-state":
      return event.runState === "queued" || event.runState === "running";
    case "cell-outputs-cleared":
    case "cell-output":
    case "cell-stream":
    case "cell-stream-tail":
    case "cell-metrics":
    case "cell-metric-points":
    case "cell-device-plan":
      return true;
    case "kernel-status":
      return event.status.state === "busy";
    default:
      return false;
  }
}

export type { LiveMetrics };
