/**
 * A kernel's lifecycle as seen by the rest of the server: a status union, an
 * execution queue (one cell at a time, as in Jupyter), interrupt, restart,
 * shutdown and crash detection. Output goes to the ExecutionSink of the cell
 * that produced it; the session never caps or stores it.
 */
import { randomUUID } from "node:crypto";
import type { KernelInfo, KernelStatus } from "../protocol/notebook-model";
import type { KernelMessage, KernelMessageOf } from "../protocol/kernel-messages";
import { KernelChannel, KernelStartError, describeExit } from "./kernel-channel";
import type { KernelHost } from "./kernel-host";
import type { PtyExit } from "./pty-process";

export type ExecutionStatus = "ok" | "error" | "interrupted" | "aborted" | "kernel-died";

export type ExecutionOutput = KernelMessageOf<"stream" | "execute_result" | "display_data" | "error">;

export interface ExecutionSink {
  started(): void;
  console(text: string): void;
  output(message: ExecutionOutput): void;
  finished(result: { status: ExecutionStatus; executionCount: number | null; durationMs: number }): void;
}

export interface KernelSessionOptions {
  host: KernelHost;
  startTimeoutMs?: number;
  cwd?: string;
  /** Metric points, whichever cell they come from. */
  onMetric?: (message: KernelMessageOf<"metric">) => void;
  onLog?: (level: "info" | "warning" | "error", message: string) => void;
}

interface Execution {
  id: string;
  code: string;
  sink: ExecutionSink;
  startedAt: number;
  /** The kernel said "busy" for it: an interrupt now reaches its code. */
  acknowledged: boolean;
  interruptPending: boolean;
}

const LAST_OUTPUT_KEPT = 8 * 1024;

export class KernelSession {
  private channel: KernelChannel | null = null;
  private info: KernelInfo | null = null;
  private currentStatus: KernelStatus = { state: "not-started" };
  private readonly queue: Execution[] = [];
  private running: Execution | null = null;
  /** Output that arrives while idle (background threads) goes to the last cell, as in Jupyter. */
  private lastSink: ExecutionSink | null = null;
  private recentOutput = "";
  private expectingExit = false;
  private starting: Promise<void> | null = null;
  private readonly statusListeners = new Set<(status: KernelStatus) => void>();
  private readonly pings = new Map<string, () => void>();

  constructor(private readonly options: KernelSessionOptions) {}

  get status(): KernelStatus {
    return this.currentStatus;
  }

  get pid(): number | null {
    return this.channel?.pid ?? null;
  }

  onStatus(listener: (status: KernelStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Starts the kernel if it is not running; resolves when it is ready (or failed: see status). */
  ensureStarted(): Promise<void> {
    if (this.channel?.alive && this.info) return Promise.resolve();
    this.starting ??= this.start().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  execute(code: string, sink: ExecutionSink): string {
    const execution: Execution = { id: randomUUID(), code, sink, startedAt: 0, acknowledged: false, interruptPending: false };
    if (this.currentStatus.state === "dead") {
      // A dead kernel is restarted on purpose, never behind the user's back:
      // the reason it died stays on screen until they choose to restart.
      sink.finished({ status: "kernel-died", executionCount: null, durationMs: 0 });
      return execution.id;
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
    this.setStatus({ state: "restarting" });
    await this.stopChannel("aborted");
    await this.ensureStarted();
  }

  async shutdown(): Promise<void> {
    await this.stopChannel("aborted");
    this.setStatus({ state: "shutdown" });
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

  private async start(): Promise<void> {
    if (this.currentStatus.state !== "restarting") this.setStatus({ state: "starting" });
    this.recentOutput = "";
    this.expectingExit = false;
    try {
      const { channel, hello } = await KernelChannel.start(
        { host: this.options.host, startTimeoutMs: this.options.startTimeoutMs, cwd: this.options.cwd },
        {
          message: (message) => this.onMessage(message),
          console: (text) => this.onConsole(text),
          protocolError: (reason) => this.options.onLog?.("warning", `kernel protocol: ${reason}`),
          exit: (exit) => this.onExit(channel, exit),
        },
      );
      this.channel = channel;
      this.info = describeKernel(hello);
      this.setStatus({ state: "idle", info: this.info });
    } catch (error) {
      const output = error instanceof KernelStartError ? error.output : "";
      this.channel = null;
      this.info = null;
      this.setStatus({ state: "dead", reason: (error as Error).message, lastOutput: output.slice(-LAST_OUTPUT_KEPT) });
      this.abortQueued();
    }
  }

  private pump(): void {
    if (this.running || !this.channel?.alive || !this.info) return;
    const next = this.queue.shift();
    if (!next) return;
    this.running = next;
    this.lastSink = next.sink;
    next.startedAt = performance.now();
    this.setStatus({ state: "busy", info: this.info });
    next.sink.started();
    this.channel.send({ type: "execute", id: next.id, code: next.code });
  }

  private onMessage(message: KernelMessage): void {
    switch (message.type) {
      case "stream":
      case "execute_result":
      case "display_data":
      case "error":
        this.sinkFor(message.id)?.output(message);
        return;
      case "execute_reply":
        this.finishRunning(message.id, message.status, message.count);
        return;
      case "pong":
        this.pings.get(message.id)?.();
        this.pings.delete(message.id);
        return;
      case "metric":
        this.options.onMetric?.(message);
        return;
      case "kernel_log":
        this.options.onLog?.(message.level, message.message);
        return;
      case "status":
        if (message.state === "busy" && this.running?.id === message.id) {
          this.running.acknowledged = true;
          if (this.running.interruptPending) this.channel?.interrupt();
        }
        return;
      case "hello":
        return;
      default:
        assertNever(message);
    }
  }

  private onConsole(text: string): void {
    this.recentOutput = (this.recentOutput + text).slice(-LAST_OUTPUT_KEPT);
    (this.running?.sink ?? this.lastSink)?.console(text);
  }

  private sinkFor(executionId: string): ExecutionSink | null {
    if (this.running?.id === executionId) return this.running.sink;
    return this.lastSink;
  }

  private finishRunning(executionId: string, status: "ok" | "error" | "interrupted", count: number): void {
    const execution = this.running;
    if (!execution || execution.id !== executionId) return;
    this.running = null;
    execution.sink.finished({ status, executionCount: count, durationMs: performance.now() - execution.startedAt });
    if (status !== "ok") this.abortQueued();
    if (this.info) this.setStatus({ state: "idle", info: this.info });
    this.pump();
  }

  private onExit(channel: KernelChannel, exit: PtyExit): void {
    if (channel !== this.channel) return;
    this.channel = null;
    this.info = null;
    this.failRunning("kernel-died");
    this.abortQueued();
    if (this.expectingExit) return;
    this.setStatus({ state: "dead", reason: describeExit(exit), lastOutput: this.recentOutput });
  }

  private async stopChannel(runningStatus: ExecutionStatus): Promise<void> {
    this.abortQueued();
    this.failRunning(runningStatus);
    const channel = this.channel;
    if (!channel) return;
    this.expectingExit = true;
    this.channel = null;
    this.info = null;
    await channel.shutdown(1500);
  }

  private failRunning(status: ExecutionStatus): void {
    const execution = this.running;
    if (!execution) return;
    this.running = null;
    execution.sink.finished({ status, executionCount: null, durationMs: performance.now() - execution.startedAt });
  }

  private abortQueued(): void {
    for (const execution of this.queue.splice(0)) {
      execution.sink.finished({ status: "aborted", executionCount: null, durationMs: 0 });
    }
  }

  private setStatus(status: KernelStatus): void {
    this.currentStatus = status;
    for (const listener of this.statusListeners) listener(status);
  }
}

export function describeKernel(hello: KernelMessageOf<"hello">): KernelInfo {
  const deviceMode = hello.cudaDevices > 0
    ? `${hello.cudaDevices}× CUDA GPU`
    : "CPU only (no CUDA): multi-GPU experiments run on emulated CPU devices";
  return {
    pid: hello.pid,
    hostname: hello.hostname,
    python: hello.python,
    executable: hello.executable,
    torch: hello.torch,
    deviceMode,
  };
}

function assertNever(value: never): never {
  throw new Error(`unhandled kernel message: ${JSON.stringify(value)}`);
}
