/**
 * A kernel's lifecycle as seen by the rest of the server: a status union, an
 * execution queue (one cell at a time, as in Jupyter), interrupt, restart,
 * shutdown and crash detection. Output goes to the ExecutionSink of the cell
 * that produced it; the session never caps or stores it.
 */
import { randomUUID } from "node:crypto";
import type { ExecutionStatus, KernelInfo, KernelStatus } from "../core/protocol/notebook-model";
import { assertNever } from "../core/assert-never";
import { isExecutionRef, type KernelMessage, type KernelMessageOf } from "../core/protocol/kernel-messages";
import { KernelStartError } from "./kernel-channel";
import { describeKernelExit, KernelRefusedError, type KernelExit, type KernelLauncher, type KernelPlacement, type KernelProcess, type KernelProcessEvents } from "./kernel-process";
import { restartNotice, type Execution, type ExecutionRef, type ExecutionSink } from "./kernel-execution";
import { HangWatchdog } from "./hang-watchdog";
import { ExecutionQueue } from "./execution-queue";
import { KernelStatusBoard } from "./kernel-status";
import { KernelRequests } from "./kernel-requests";
import { describeKernel, type KernelSessionOptions } from "./kernel-launch";
import { errorMessage } from "../core/errors";

export type { ExecutionStatus };
export type { ExecutionOutput, ExecutionRef, ExecutionSink, HangReport } from "./kernel-execution";
export type { KernelLaunch, KernelSessionOptions } from "./kernel-launch";

const LAST_OUTPUT_KEPT = 8 * 1024;

export class KernelSession {
  private channel: KernelProcess | null = null;
  /** The launcher of the current (or last) kernel. */
  private launcher: KernelLauncher | null = null;
  private info: KernelInfo | null = null;
  private readonly board = new KernelStatusBoard();
  /** The running cell and those waiting, and where output goes. */
  private readonly cells = new ExecutionQueue();
  private recentOutput = "";
  private expectingExit = false;
  private starting: Promise<void> | null = null;
  /** Aborts the start in progress (one waiting for GPUs in its host's queue). */
  private startAbort: AbortController | null = null;
  /** A kernel being stopped on purpose: a start waits for it to be gone. */
  private stopping: Promise<void> | null = null;
  /** Ping, stacks, completion and inspection: each waits for its own reply, never behind a cell. */
  readonly requests = new KernelRequests({
    channel: () => this.channel,
    idle: () => this.board.status.state === "idle" && this.cells.pending === 0,
  });
  private readonly watchdog: HangWatchdog;
  /** Its id on the host agent while its start waits in the GPU queue (the hosts page names the notebook waiting). */
  private queuedAs: string | null = null;

  constructor(private readonly options: KernelSessionOptions) {
    this.watchdog = new HangWatchdog({
      hangAfterMs: options.hangAfterMs,
      running: () => this.cells.running,
      collectStacks: () => this.requests.collectStacks(),
      requestTtyStacks: () => this.channel?.requestStacks(),
    });
  }

  /** The kernel's id on its host agent while its start waits for GPUs; null otherwise. */
  get queuedAgentKernelId(): string | null {
    return this.queuedAs;
  }

  get status(): KernelStatus {
    return this.board.status;
  }

  get pid(): number | null {
    return this.channel?.pid ?? null;
  }

  /** The launcher the current (or last) kernel came from; null before any. */
  get host(): KernelLauncher | null {
    return this.launcher;
  }

  /** Where the kernel runs (host, agent kernel id, leased GPUs); null without one. */
  get placement(): KernelPlacement | null {
    return this.channel?.placement ?? null;
  }

  /** How far into the kernel's numbered output every message has been handled (0 for a local PTY). */
  get processedSeq(): number {
    return this.channel?.processedSeq ?? 0;
  }

  /** Everything up to `seq` of the current kernel's output is stored. */
  acknowledge(seq: number): void {
    this.channel?.acknowledge(seq);
  }

  /**
   * Takes over a kernel that outlived the previous lab server (its host agent
   * kept it): its output after `afterSeq` is replayed, then it streams live.
   * `running`, when a cell was running, gets that output as if it had never
   * stopped. False when the kernel is gone.
   */
  async resume(host: KernelLauncher, agentKernelId: string, afterSeq: number, info: KernelInfo, running: { executionId: string; sink: ExecutionSink; startedAt: Date | null } | null): Promise<boolean> {
    if (!host.resume) return false;
    let resumed: KernelProcess | null = null;
    const events = this.processEvents(() => resumed);
    if (running) {
      const now = performance.now();
      // It started under the previous server: its duration counts from then, not from this takeover (the
      // kernel's own reply says how long it ran; this is for an end without one).
      const startedAt = running.startedAt === null ? now : now - Math.max(0, Date.now() - running.startedAt.getTime());
      this.cells.adopt({ id: running.executionId, code: "", ref: null, sink: running.sink, startedAt, acknowledged: true, interruptPending: false, lastProgressAt: now, diagnosed: false });
    }
    resumed = await host.resume(agentKernelId, afterSeq, events);
    if (!resumed) {
      this.cells.forget({ running: true });
      return false;
    }
    this.channel = resumed;
    this.launcher = host;
    this.info = info;
    this.board.watchLink(resumed, () => this.channel === resumed);
    this.board.set({ state: this.cells.running ? "busy" : "idle", info });
    if (this.cells.running) this.watchdog.arm();
    return true;
  }

  onStatus(listener: (status: KernelStatus) => void): () => void {
    return this.board.onChange(listener);
  }

  /** Starts the kernel if it is not running; resolves when it is ready (or failed: see status). */
  ensureStarted(): Promise<void> {
    if (this.channel?.alive && this.info) return Promise.resolve();
    const stopping = this.stopping;
    this.starting ??= (stopping ? stopping.then(() => this.start()) : this.start()).finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  execute(code: string, sink: ExecutionSink, ref: ExecutionRef | null = null): string {
    // The stored execution's id when it has one: a kernel that outlives this server is resumed by it.
    const id = ref && isExecutionRef(ref.executionId) ? ref.executionId : randomUUID();
    const execution: Execution = { id, code, ref, sink, startedAt: 0, acknowledged: false, interruptPending: false, lastProgressAt: 0, diagnosed: false };
    if (this.board.status.state === "dead") {
      // Running a cell on a dead kernel starts a new one, as Jupyter restarts a kernel that died. It is never
      // silent: the cell first says why the old one stopped and what that costs.
      execution.notice = restartNotice(this.board.status.reason);
    }
    this.cells.add(execution);
    void this.ensureStarted().then(() => this.pump());
    return execution.id;
  }

  /** Ctrl-C on the kernel's tty; queued cells are dropped, as Jupyter does after an interrupt. */
  interrupt(): void {
    this.cells.abortWaiting();
    const running = this.cells.running;
    if (!this.channel?.alive || !running || !this.info) return;
    this.board.set({ state: "interrupting", info: this.info });
    // Ctrl-C before the kernel has picked the cell up would hit the idle loop
    // and be lost; it is sent as soon as the kernel says it is busy.
    if (running.acknowledged) this.channel.interrupt();
    else running.interruptPending = true;
  }

  /** Ask every process on the kernel's tty for its Python stacks. */
  requestStacks(): void {
    this.channel?.requestStacks();
  }

  async restart(): Promise<void> {
    // A start waiting in the GPU queue is already the fresh kernel a restart asks for: it keeps its place.
    if (this.starting && this.board.status.state === "starting" && this.board.status.queue) return;
    this.board.set({ state: "restarting" });
    await this.stopChannel("aborted");
    await this.ensureStarted();
  }

  /**
   * Stops the kernel. `reason` is shown to the notebook's viewers (null: they
   * asked for it themselves). A cell still running ends as `runningStatus`
   * ("aborted" when the user shuts down; "interrupted" when the lab server stops).
   */
  async shutdown(reason: string | null = null, { runningStatus = "aborted" }: { runningStatus?: ExecutionStatus } = {}): Promise<void> {
    const startingNow = this.starting;
    const status = this.board.status;
    // A start that waits for GPUs leaves the queue: the status says so.
    if (reason === null && status.state === "starting" && status.queue) reason = `it left the GPU queue of ${status.queue.host} before it started`;
    this.startAbort?.abort();
    if (startingNow) {
      // A process being started has no channel to stop yet: let it come up, then end it (else it would outlive the shutdown).
      this.cells.abortWaiting();
      await startingNow;
    }
    await this.stopChannel(runningStatus);
    // A cell run while the old process was exiting has started a new kernel: that one's status stands.
    if (this.channel === null && this.starting === null) this.board.set({ state: "shutdown", reason });
  }

  /** Cells running or waiting in the queue. */
  get pendingExecutions(): number {
    return this.cells.pending;
  }

  /** The editor's completions at the cursor, or null when the kernel cannot answer now (KernelRequests). */
  complete(code: string, cursor: number): Promise<KernelMessageOf<"complete_reply"> | null> {
    return this.requests.complete(code, cursor);
  }

  /** Signature and docstring at the cursor, or null as for `complete`. */
  inspect(code: string, cursor: number, detail = false): Promise<KernelMessageOf<"inspect_reply"> | null> {
    return this.requests.inspect(code, cursor, detail);
  }

  private async start(): Promise<void> {
    if (this.board.status.state !== "restarting") this.board.set({ state: "starting" });
    this.recentOutput = "";
    this.expectingExit = false;
    try {
      const { host, gpus, notebookId } = this.options.launch();
      let started: KernelProcess | null = null;
      const abort = (this.startAbort = new AbortController());
      const { process, hello } = await host.start(this.processEvents(() => started), {
        signal: abort.signal,
        startTimeoutMs: this.options.startTimeoutMs,
        cwd: this.options.cwd,
        gpus,
        notebookId,
        onQueued: ({ position, agentKernelId, wait }) => {
          this.queuedAs = agentKernelId;
          this.board.set({ state: "starting", queue: { position, host: host.label, gpus, ...(wait ? { wait } : {}) } });
        },
      }).finally(() => {
        this.queuedAs = null;
      });
      started = process;
      this.channel = process;
      this.launcher = host;
      this.info = describeKernel(hello, process.placement, host.label);
      this.board.watchLink(process, () => this.channel === process);
      // Before any execute: the kernel starts importing while the first cell is still on its way.
      const preload = this.options.preload?.() ?? [];
      if (preload.length > 0) process.send({ type: "preload", modules: [...preload] });
      this.board.set({ state: "idle", info: this.info });
    } catch (error) {
      const output = error instanceof KernelStartError ? error.output : "";
      const given = this.startAbort?.signal.aborted === true;
      this.channel = null;
      this.info = null;
      // Given up on purpose (a shutdown while it waited): the shutdown says what became of it.
      if (error instanceof KernelRefusedError) this.board.set({ state: "refused", reason: error.message, wait: error.wait });
      else if (!given) this.board.set({ state: "dead", reason: errorMessage(error), lastOutput: output.slice(-LAST_OUTPUT_KEPT) });
      // The cells waiting for this kernel never ran: they say so, not that an earlier cell failed.
      this.cells.abortWaiting("no-kernel");
    }
  }

  /** The events of one kernel process; `current` names it once known, so a late exit of an old one is ignored. */
  private processEvents(current: () => KernelProcess | null): KernelProcessEvents {
    return {
      message: (message) => this.onMessage(message),
      console: (text) => this.onConsole(text),
      protocolError: (reason) => this.options.onLog?.("warning", `kernel protocol: ${reason}`),
      exit: (exit) => this.onExit(current(), exit),
    };
  }

  private pump(): void {
    if (!this.channel?.alive || !this.info) return;
    const next = this.cells.next();
    if (!next) return;
    this.watchdog.arm();
    this.board.set({ state: "busy", info: this.info });
    next.sink.started();
    if (next.notice) next.sink.output({ type: "stream", id: next.id, name: "stderr", text: next.notice });
    // An id the protocol cannot carry (a cell id from an old import) is left out rather than failing the run.
    const ref = next.ref && isExecutionRef(next.ref.cellId) && isExecutionRef(next.ref.executionId) ? next.ref : {};
    this.channel.send({ type: "execute", id: next.id, code: next.code, ...ref });
  }

  private onMessage(message: KernelMessage): void {
    switch (message.type) {
      case "stream":
      case "execute_result":
      case "display_data":
      case "error":
        this.watchdog.progress();
        this.cells.sinkFor(message.id)?.output(message);
        return;
      case "execute_reply":
        this.finishRunning(message.id, message.status, message.count, message.durationMs);
        return;
      case "pong":
      case "stacks":
      case "complete_reply":
      case "inspect_reply":
        this.requests.answer(message);
        return;
      case "metric":
        this.watchdog.progress();
        this.options.onMetric?.(message);
        return;
      case "kernel_log":
        this.options.onLog?.(message.level, message.message);
        return;
      case "device_plan":
        this.options.onDevicePlan?.(message);
        return;
      case "status":
        if (message.state === "busy" && this.cells.running?.id === message.id) {
          this.cells.running.acknowledged = true;
          if (this.cells.running.interruptPending) this.channel?.interrupt();
        }
        return;
      case "hello":
        return;
      default:
        assertNever(message, "kernel message");
    }
  }

  private onConsole(text: string): void {
    this.watchdog.progress();
    this.recentOutput = (this.recentOutput + text).slice(-LAST_OUTPUT_KEPT);
    this.cells.sinkFor(null)?.console(text);
  }

  /** `kernelMs`: how long the cell ran by the kernel's own clock, which a restart of the lab server does not reset. */
  private finishRunning(executionId: string, status: "ok" | "error" | "interrupted", count: number, kernelMs: number): void {
    if (this.cells.running?.id !== executionId) return;
    this.watchdog.disarm();
    this.cells.finish(executionId, { status, executionCount: count, durationMs: kernelMs });
    if (status !== "ok") this.cells.abortWaiting();
    if (this.info) this.board.set({ state: "idle", info: this.info });
    this.pump();
  }

  private onExit(channel: KernelProcess | null, exit: KernelExit): void {
    // A stop on purpose ends the running cell itself, once the kernel is gone (stopChannel).
    if (channel === null || channel !== this.channel || this.expectingExit) return;
    this.channel = null;
    this.info = null;
    this.failRunning("kernel-died");
    this.cells.abortWaiting();
    if (this.expectingExit) return;
    this.board.set({ state: "dead", reason: describeKernelExit(exit), lastOutput: this.recentOutput });
  }

  /**
   * The kernel is stopped first, so everything it printed on the way out still
   * reaches the running cell; then the cell ends, and nothing reaches any cell
   * after that (no line after "finished").
   */
  private async stopChannel(runningStatus: ExecutionStatus): Promise<void> {
    this.cells.abortWaiting();
    const channel = this.channel;
    if (channel) {
      this.expectingExit = true;
      this.info = null; // nothing new is sent to a kernel on its way out
      const stopped = channel.shutdown(1500).then(() => undefined);
      this.stopping = stopped;
      await stopped;
      if (this.stopping === stopped) this.stopping = null;
    }
    if (this.channel === channel) {
      this.channel = null;
      this.info = null;
    }
    this.cells.forget({ running: false });
    this.failRunning(runningStatus);
  }

  private failRunning(status: ExecutionStatus): void {
    this.watchdog.disarm();
    this.cells.failRunning(status);
  }

}
