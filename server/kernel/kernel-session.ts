/**
 * A kernel's lifecycle as seen by the rest of the server: a status union, an
 * execution queue (one cell at a time, as in Jupyter), interrupt, restart,
 * shutdown and crash detection. Output goes to the ExecutionSink of the cell
 * that produced it; the session never caps or stores it.
 */
import { randomUUID } from "node:crypto";
import type { ExecutionStatus, KernelInfo, KernelLinkTrouble, KernelStatus } from "../core/protocol/notebook-model";
import { assertNever } from "../core/assert-never";
import { isExecutionRef, type KernelMessage, type KernelMessageOf, type KernelRequest } from "../core/protocol/kernel-messages";
import { KernelStartError } from "./kernel-channel";
import { describeKernelExit, KernelRefusedError, type KernelExit, type KernelLauncher, type KernelPlacement, type KernelProcess, type KernelProcessEvents } from "./kernel-process";
import { summarizeProcess, type ProcessStack } from "./stack-summary";
import type { Log } from "../logger";

export type { ExecutionStatus };

export type ExecutionOutput = KernelMessageOf<"stream" | "execute_result" | "display_data" | "error">;

/** What the watchdog found when a busy cell made no progress for a while. */
export interface HangReport {
  idleMs: number;
  processes: ProcessStack[];
  /** One line per process: "rank 0: in all_reduce (distributed_c10d.py:1534)". */
  summary: string[];
  /** "kernel": the kernel answered with every process's stack; "tty": it did not, Ctrl-\ printed what it could. */
  answeredBy: "kernel" | "tty";
}

export interface ExecutionSink {
  started(): void;
  /** The watchdog's report; the cell keeps running until the user interrupts or restarts. */
  hang?(report: HangReport): void;
  console(text: string): void;
  output(message: ExecutionOutput): void;
  finished(result: { status: ExecutionStatus; executionCount: number | null; durationMs: number }): void;
}

/** Where a kernel starts and how many GPUs it asks its host for. */
export interface KernelLaunch {
  host: KernelLauncher;
  gpus: number;
  /** The notebook asking (the holders of GPUs it waits for are named as its owner may see them). */
  notebookId?: string;
}

export interface KernelSessionOptions {
  /**
   * Read at each start, so a notebook's kernel spec applies at the next
   * (re)start; a throw (a host no longer configured) fails that start with its message.
   */
  launch: () => KernelLaunch;
  startTimeoutMs?: number;
  cwd?: string;
  /** A busy cell with no output, metric or heartbeat for this long is diagnosed (default 120 s). */
  hangAfterMs?: number;
  /** Metric points, whichever cell they come from. */
  onMetric?: (message: KernelMessageOf<"metric">) => void;
  /** The devices a run (metric tag) ran on, as the toolkit planned them. */
  onDevicePlan?: (message: KernelMessageOf<"device_plan">) => void;
  onLog?: Log;
  /** Modules the kernel imports in the background once it has started (read at each start; empty: none). */
  preload?: () => readonly string[];
}

/** Which notebook cell, and which of its executions, a run is: the kernel tells library code (scenario evidence records it). */
export interface ExecutionRef {
  cellId: string;
  executionId: string;
}

interface Execution {
  id: string;
  code: string;
  ref: ExecutionRef | null;
  sink: ExecutionSink;
  startedAt: number;
  /** The kernel said "busy" for it: an interrupt now reaches its code. */
  acknowledged: boolean;
  interruptPending: boolean;
  lastProgressAt: number;
  /** The watchdog reported this quiet period already; progress clears it. */
  diagnosed: boolean;
  /** Shown in the cell before its output (a new kernel was started for it: see restartNotice). */
  notice?: string;
}

export const DEFAULT_HANG_AFTER_MS = 120_000;
const STACKS_ANSWER_MS = 5_000;
/**
 * How long an editor waits for a completion before it falls back to words of
 * the cell: long enough for jedi's first answer (it reads the modules it
 * completes from), short enough that Tab never feels stuck.
 */
export const ASSIST_ANSWER_MS = 3_000;

const LAST_OUTPUT_KEPT = 8 * 1024;

export class KernelSession {
  private channel: KernelProcess | null = null;
  /** The launcher of the current (or last) kernel. */
  private launcher: KernelLauncher | null = null;
  private info: KernelInfo | null = null;
  private currentStatus: KernelStatus = { state: "not-started" };
  private readonly queue: Execution[] = [];
  private running: Execution | null = null;
  /** Output that arrives while idle (background threads) goes to the last cell, as in Jupyter. */
  private lastSink: ExecutionSink | null = null;
  private recentOutput = "";
  private expectingExit = false;
  private starting: Promise<void> | null = null;
  /** Aborts the start in progress (one waiting for GPUs in its host's queue). */
  private startAbort: AbortController | null = null;
  /** A kernel being stopped on purpose: a start waits for it to be gone. */
  private stopping: Promise<void> | null = null;
  private readonly statusListeners = new Set<(status: KernelStatus) => void>();
  private readonly pings = new Map<string, () => void>();
  private readonly stackRequests = new Map<string, (processes: ProcessStack[]) => void>();
  /** Completion and inspection requests waiting for their reply. */
  private readonly assistRequests = new Map<string, (reply: KernelMessageOf<"complete_reply" | "inspect_reply">) => void>();
  private watchdog: NodeJS.Timeout | null = null;
  /** Its id on the host agent while its start waits in the GPU queue (the hosts page names the notebook waiting). */
  private queuedAs: string | null = null;
  /** The link to the kernel's host while it does not answer; shown with idle/busy/interrupting. */
  private linkTrouble: KernelLinkTrouble | null = null;
  private stopListeningToLink: (() => void) | null = null;

  constructor(private readonly options: KernelSessionOptions) {}

  /** The kernel's id on its host agent while its start waits for GPUs; null otherwise. */
  get queuedAgentKernelId(): string | null {
    return this.queuedAs;
  }

  get status(): KernelStatus {
    return this.currentStatus;
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
      this.running = { id: running.executionId, code: "", ref: null, sink: running.sink, startedAt, acknowledged: true, interruptPending: false, lastProgressAt: now, diagnosed: false };
      this.lastSink = running.sink;
    }
    resumed = await host.resume(agentKernelId, afterSeq, events);
    if (!resumed) {
      this.running = null;
      this.lastSink = null;
      return false;
    }
    this.channel = resumed;
    this.launcher = host;
    this.info = info;
    this.listenToLink(resumed);
    this.setStatus({ state: this.running ? "busy" : "idle", info });
    if (this.running) this.armWatchdog();
    return true;
  }

  onStatus(listener: (status: KernelStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
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
    if (this.currentStatus.state === "dead") {
      // Running a cell on a dead kernel starts a new one, as Jupyter restarts a kernel that died. It is never
      // silent: the cell first says why the old one stopped and what that costs.
      execution.notice = restartNotice(this.currentStatus.reason);
    }
    this.queue.push(execution);
    void this.ensureStarted().then(() => this.pump());
    return execution.id;
  }

  /** Ctrl-C on the kernel's tty; queued cells are dropped, as Jupyter does after an interrupt. */
  interrupt(): void {
    this.abortQueued();
    if (!this.channel?.alive || !this.running || !this.info) return;
    this.setStatus({ state: "interrupting", info: this.info });
    // Ctrl-C before the kernel has picked the cell up would hit the idle loop
    // and be lost; it is sent as soon as the kernel says it is busy.
    if (this.running.acknowledged) this.channel.interrupt();
    else this.running.interruptPending = true;
  }

  /** Ask every process on the kernel's tty for its Python stacks. */
  requestStacks(): void {
    this.channel?.requestStacks();
  }

  async restart(): Promise<void> {
    // A start waiting in the GPU queue is already the fresh kernel a restart asks for: it keeps its place.
    if (this.starting && this.currentStatus.state === "starting" && this.currentStatus.queue) return;
    this.setStatus({ state: "restarting" });
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
    const status = this.currentStatus;
    // A start that waits for GPUs leaves the queue: the status says so.
    if (reason === null && status.state === "starting" && status.queue) reason = `it left the GPU queue of ${status.queue.host} before it started`;
    this.startAbort?.abort();
    if (startingNow) {
      // A process being started has no channel to stop yet: let it come up, then end it (else it would outlive the shutdown).
      this.abortQueued();
      await startingNow;
    }
    await this.stopChannel(runningStatus);
    // A cell run while the old process was exiting has started a new kernel: that one's status stands.
    if (this.channel === null && this.starting === null) this.setStatus({ state: "shutdown", reason });
  }

  /** Cells running or waiting in the queue. */
  get pendingExecutions(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  /** Round trip through the kernel's reader thread and main loop. */
  ping(timeoutMs = 5000): Promise<void> {
    const channel = this.channel;
    if (!channel?.alive) return Promise.reject(new Error("kernel is not running"));
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pings.delete(id);
        reject(new Error("ping timed out"));
      }, timeoutMs);
      this.pings.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      channel.send({ type: "ping", id });
    });
  }

  /**
   * Completions from the kernel's namespace, or null when it cannot answer now:
   * it is not idle (a running cell holds its main loop; completion must not
   * wait behind it), not started, or silent for `timeoutMs`.
   */
  async complete(code: string, cursor: number, timeoutMs = ASSIST_ANSWER_MS): Promise<KernelMessageOf<"complete_reply"> | null> {
    const reply = await this.askIdle({ type: "complete", id: randomUUID(), code, cursor }, timeoutMs);
    return reply?.type === "complete_reply" ? reply : null;
  }

  /** Signature and docstring at the cursor, or null as for `complete`. */
  async inspect(code: string, cursor: number, detail = false, timeoutMs = ASSIST_ANSWER_MS): Promise<KernelMessageOf<"inspect_reply"> | null> {
    const reply = await this.askIdle({ type: "inspect", id: randomUUID(), code, cursor, ...(detail ? { detail } : {}) }, timeoutMs);
    return reply?.type === "inspect_reply" ? reply : null;
  }

  private askIdle(request: Extract<KernelRequest, { type: "complete" | "inspect" }>, timeoutMs: number): Promise<KernelMessageOf<"complete_reply" | "inspect_reply"> | null> {
    const channel = this.channel;
    if (!channel?.alive || this.currentStatus.state !== "idle" || this.running !== null || this.queue.length > 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.assistRequests.delete(request.id);
        resolve(null);
      }, timeoutMs);
      this.assistRequests.set(request.id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      channel.send(request);
    });
  }

  private async start(): Promise<void> {
    if (this.currentStatus.state !== "restarting") this.setStatus({ state: "starting" });
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
          this.setStatus({ state: "starting", queue: { position, host: host.label, gpus, ...(wait ? { wait } : {}) } });
        },
      }).finally(() => {
        this.queuedAs = null;
      });
      started = process;
      this.channel = process;
      this.launcher = host;
      this.info = describeKernel(hello, process.placement, host.label);
      this.listenToLink(process);
      // Before any execute: the kernel starts importing while the first cell is still on its way.
      const preload = this.options.preload?.() ?? [];
      if (preload.length > 0) process.send({ type: "preload", modules: [...preload] });
      this.setStatus({ state: "idle", info: this.info });
    } catch (error) {
      const output = error instanceof KernelStartError ? error.output : "";
      const given = this.startAbort?.signal.aborted === true;
      this.channel = null;
      this.info = null;
      // Given up on purpose (a shutdown while it waited): the shutdown says what became of it.
      if (error instanceof KernelRefusedError) this.setStatus({ state: "refused", reason: error.message, wait: error.wait });
      else if (!given) this.setStatus({ state: "dead", reason: (error as Error).message, lastOutput: output.slice(-LAST_OUTPUT_KEPT) });
      // The cells waiting for this kernel never ran: they say so, not that an earlier cell failed.
      this.abortQueued("no-kernel");
    }
  }

  /** The kernel's link (a host agent's) stalls or reconnects: its status says so until it answers again. */
  private listenToLink(process: KernelProcess): void {
    this.stopListeningToLink?.();
    this.linkTrouble = null;
    this.stopListeningToLink =
      process.onLinkTrouble?.((trouble) => {
        if (this.channel !== process) return;
        this.linkTrouble = trouble;
        const status = this.currentStatus;
        if (status.state === "idle" || status.state === "busy" || status.state === "interrupting") this.setStatus({ state: status.state, info: status.info });
      }) ?? null;
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
    if (this.running || !this.channel?.alive || !this.info) return;
    const next = this.queue.shift();
    if (!next) return;
    this.running = next;
    this.lastSink = next.sink;
    next.startedAt = next.lastProgressAt = performance.now();
    this.armWatchdog();
    this.setStatus({ state: "busy", info: this.info });
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
        this.progress();
        this.sinkFor(message.id)?.output(message);
        return;
      case "execute_reply":
        this.finishRunning(message.id, message.status, message.count, message.durationMs);
        return;
      case "pong":
        this.pings.get(message.id)?.();
        this.pings.delete(message.id);
        return;
      case "metric":
        this.progress();
        this.options.onMetric?.(message);
        return;
      case "kernel_log":
        this.options.onLog?.(message.level, message.message);
        return;
      case "device_plan":
        this.options.onDevicePlan?.(message);
        return;
      case "status":
        if (message.state === "busy" && this.running?.id === message.id) {
          this.running.acknowledged = true;
          if (this.running.interruptPending) this.channel?.interrupt();
        }
        return;
      case "stacks":
        this.stackRequests.get(message.id)?.(message.processes);
        this.stackRequests.delete(message.id);
        return;
      case "complete_reply":
      case "inspect_reply":
        this.assistRequests.get(message.id)?.(message);
        this.assistRequests.delete(message.id);
        return;
      case "hello":
        return;
      default:
        assertNever(message, "kernel message");
    }
  }

  private onConsole(text: string): void {
    this.progress();
    this.recentOutput = (this.recentOutput + text).slice(-LAST_OUTPUT_KEPT);
    (this.running?.sink ?? this.lastSink)?.console(text);
  }

  /** Python stacks of the kernel and every registered rank, answered even while a cell runs. */
  collectStacks(timeoutMs = STACKS_ANSWER_MS): Promise<ProcessStack[] | null> {
    const channel = this.channel;
    if (!channel?.alive) return Promise.resolve(null);
    const id = randomUUID();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.stackRequests.delete(id);
        resolve(null);
      }, timeoutMs);
      this.stackRequests.set(id, (processes) => {
        clearTimeout(timer);
        resolve(processes);
      });
      channel.send({ type: "stacks", id });
    });
  }

  private progress(): void {
    if (!this.running) return;
    this.running.lastProgressAt = performance.now();
    this.running.diagnosed = false;
  }

  private get hangAfterMs(): number {
    return this.options.hangAfterMs ?? DEFAULT_HANG_AFTER_MS;
  }

  /** One timer per running cell, re-armed for the remaining quiet time rather than on every chunk. */
  private armWatchdog(delayMs = this.hangAfterMs): void {
    if (this.watchdog || !Number.isFinite(this.hangAfterMs)) return;
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      void this.checkForHang();
    }, delayMs);
    this.watchdog.unref();
  }

  private async checkForHang(): Promise<void> {
    const execution = this.running;
    if (!execution) return;
    const idleMs = performance.now() - execution.lastProgressAt;
    if (idleMs < this.hangAfterMs || execution.diagnosed) {
      this.armWatchdog(execution.diagnosed ? this.hangAfterMs : this.hangAfterMs - idleMs);
      return;
    }
    execution.diagnosed = true;
    const processes = await this.collectStacks();
    if (this.running !== execution) return;
    if (!processes) this.channel?.requestStacks(); // the kernel is wedged: faulthandler prints on the tty
    const found = processes ?? [];
    execution.sink.hang?.({ idleMs, processes: found, summary: found.map(summarizeProcess), answeredBy: processes ? "kernel" : "tty" });
    this.armWatchdog();
  }

  private sinkFor(executionId: string): ExecutionSink | null {
    if (this.running?.id === executionId) return this.running.sink;
    return this.lastSink;
  }

  /** `kernelMs`: how long the cell ran by the kernel's own clock, which a restart of the lab server does not reset. */
  private finishRunning(executionId: string, status: "ok" | "error" | "interrupted", count: number, kernelMs: number): void {
    const execution = this.running;
    if (!execution || execution.id !== executionId) return;
    this.running = null;
    this.disarmWatchdog();
    execution.sink.finished({ status, executionCount: count, durationMs: kernelMs });
    if (status !== "ok") this.abortQueued();
    if (this.info) this.setStatus({ state: "idle", info: this.info });
    this.pump();
  }

  private onExit(channel: KernelProcess | null, exit: KernelExit): void {
    // A stop on purpose ends the running cell itself, once the kernel is gone (stopChannel).
    if (channel === null || channel !== this.channel || this.expectingExit) return;
    this.channel = null;
    this.info = null;
    this.failRunning("kernel-died");
    this.abortQueued();
    if (this.expectingExit) return;
    this.setStatus({ state: "dead", reason: describeKernelExit(exit), lastOutput: this.recentOutput });
  }

  /**
   * The kernel is stopped first, so everything it printed on the way out still
   * reaches the running cell; then the cell ends, and nothing reaches any cell
   * after that (no line after "finished").
   */
  private async stopChannel(runningStatus: ExecutionStatus): Promise<void> {
    this.abortQueued();
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
    this.lastSink = null;
    this.failRunning(runningStatus);
  }

  private failRunning(status: ExecutionStatus): void {
    const execution = this.running;
    if (!execution) return;
    this.running = null;
    this.disarmWatchdog();
    execution.sink.finished({ status, executionCount: null, durationMs: performance.now() - execution.startedAt });
  }

  private disarmWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }

  private abortQueued(status: ExecutionStatus = "aborted"): void {
    for (const execution of this.queue.splice(0)) {
      execution.sink.finished({ status, executionCount: null, durationMs: 0 });
    }
  }

  private setStatus(status: KernelStatus): void {
    const { linkTrouble } = this;
    if (linkTrouble && (status.state === "idle" || status.state === "busy" || status.state === "interrupting")) status = { ...status, link: linkTrouble };
    this.currentStatus = status;
    for (const listener of this.statusListeners) listener(status);
  }
}

/** What a cell says first when running it started a new kernel because the previous one had stopped. */
export function restartNotice(reason: string): string {
  const why = reason.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return `[kernel] The previous kernel stopped (${why}). Running this cell started a new one: variables and imports from before are gone.\n`;
}

export function describeKernel(hello: KernelMessageOf<"hello">, placement?: KernelPlacement, hostLabel?: string): KernelInfo {
  const deviceMode = hello.cudaDevices > 0
    ? `${hello.cudaDevices}× CUDA GPU`
    : "CPU only (no CUDA): multi-GPU experiments run on emulated CPU devices";
  return {
    ...(placement ? { host: { id: placement.hostId, label: hostLabel ?? placement.hostId }, gpus: placement.gpus } : {}),
    pid: hello.pid,
    hostname: hello.hostname,
    python: hello.python,
    executable: hello.executable,
    torch: hello.torch,
    deviceMode,
  };
}
