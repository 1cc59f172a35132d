/**
 * The lab's side of one host's agent: keeps a link open while kernels need
 * it (re-opening it after a drop, resuming every kernel from the last
 * sequence number this server processed), routes each kernel's sequenced
 * output to its owner exactly once, and turns requests that expect an answer
 * (start, interrupt, stop, health) into promises.
 */
import { randomUUID } from "node:crypto";
import type { AgentKernel, AgentMessage, AgentMessageOf, AgentRequest } from "../core/protocol/agent-messages";
import { AgentLink, AgentLinkError, agentCode, type AgentCode, type AgentSettings, type LinkTransport } from "./agent-link";

/** What the owner of one kernel on the host hears. */
export interface AgentKernelHandlers {
  /** A kernel frame's JSON text, in sequence order, once. */
  frame(json: string, seq: number): void;
  console(text: string, seq: number): void;
  badFrame(reason: string, seq: number): void;
  /** The kernel ended (its last sequenced message), or the agent no longer has it. */
  exit(exit: { code: number | null; signal: number | null; reason: string }, seq: number): void;
  /** Output was dropped from the agent's bounded buffer before the lab could store it. */
  gap?(gap: AgentMessageOf<"kernel_gap">): void;
  /** Queued, started, or moved in the GPU queue. */
  state?(kernel: AgentKernel): void;
  /**
   * A new link took this kernel over after the last one dropped (its output
   * resumes first): input sent while there was no link, or into one that was
   * dying, may never have reached it.
   */
  relinked?(): void;
}

export type HostLinkState =
  | { state: "disconnected" }
  | { state: "connecting" }
  | { state: "connected"; hello: AgentMessageOf<"agent_hello">; since: number }
  | { state: "unreachable"; error: string; output: string; at: number };

export interface HostAgentOptions {
  hostId: string;
  transport: LinkTransport;
  settings: AgentSettings;
  log: (level: "info" | "warning" | "error", message: string) => void;
  /** How long to wait for the agent's hello on a new link. */
  connectTimeoutMs?: number;
  /** The code a new agent starts with (the lab's own; a test may play an older lab). */
  code?: AgentCode;
}

interface Route {
  handlers: AgentKernelHandlers;
  /** The last sequence number handed to the handlers. */
  lastSeq: number;
}

type Answer = AgentMessageOf<"kernel_state" | "interrupt_result" | "health" | "request_failed">;

const RECONNECT_DELAYS_MS = [250, 1000, 2000, 5000, 10_000];
const REQUEST_TIMEOUT_MS = 60_000;

export class HostAgentError extends Error {}

export class HostAgent {
  private link: AgentLink | null = null;
  private connecting: Promise<AgentMessageOf<"agent_hello">> | null = null;
  private current: HostLinkState = { state: "disconnected" };
  private readonly routes = new Map<string, Route>();
  private readonly waiting = new Map<string, { resolve: (answer: Answer) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly listeners = new Set<(state: HostLinkState) => void>();
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private closed = false;
  private lastHealthReport: { report: AgentMessageOf<"health">; at: number } | null = null;
  /** Each kernel's GPU utilisation (highest of its GPUs) at the agent's last sample. */
  private readonly utilization = new Map<string, number | null>();

  constructor(readonly options: HostAgentOptions) {}

  get hostId(): string {
    return this.options.hostId;
  }

  get state(): HostLinkState {
    return this.current;
  }

  onState(listener: (state: HostLinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The open link's hello, opening one (and starting the agent) if needed. */
  connect(): Promise<AgentMessageOf<"agent_hello">> {
    if (this.closed) return Promise.reject(new HostAgentError(`host ${this.hostId}: the lab is shutting down`));
    if (this.link?.open && this.current.state === "connected") return Promise.resolve(this.current.hello);
    this.connecting ??= this.openLink().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /**
   * Starts a kernel (or queues it for GPUs). Resolves with its state once it
   * runs; `handlers.state` hears the queue positions meanwhile. Rejects with
   * the agent's reason when it refuses.
   */
  async startKernel(kernelId: string, request: { gpus: number; cwd: string | null; env: Record<string, string> }, handlers: AgentKernelHandlers): Promise<AgentKernel> {
    await this.connect();
    // The agent streams a kernel to the link that started it (until another link resumes it).
    this.routes.set(kernelId, { handlers, lastSeq: 0 });
    try {
      let answer = await this.request({ type: "start_kernel", requestId: randomUUID(), kernel: kernelId, ...request });
      // Queued: wait for the state that says it runs (or that it ended, removed from the queue).
      while (answer.type === "kernel_state" && answer.kernel.state === "queued") answer = await this.nextState(kernelId);
      if (answer.type === "request_failed") throw new HostAgentError(answer.message);
      if (answer.type !== "kernel_state") throw new HostAgentError(`unexpected answer ${answer.type} to start_kernel`);
      if (answer.kernel.state === "exited") throw new HostAgentError(answer.kernel.exit?.reason ?? "the kernel ended before it started");
      return answer.kernel;
    } catch (error) {
      this.routes.delete(kernelId);
      throw error;
    }
  }

  /**
   * Takes over a kernel the agent already runs (after a lab server restart):
   * everything after `afterSeq` is replayed, in order, then it streams live.
   * Null when the agent does not have it.
   */
  async attachKernel(kernelId: string, afterSeq: number, handlers: AgentKernelHandlers): Promise<AgentKernel | null> {
    const hello = await this.connect();
    const known = hello.kernels.find((kernel) => kernel.kernel === kernelId) ?? null;
    if (!known) return null;
    this.routes.set(kernelId, { handlers, lastSeq: afterSeq });
    this.send({ type: "resume", kernel: kernelId, afterSeq });
    return known;
  }

  /** The lab has stored this kernel's output up to `seq`: the agent may drop it. */
  ack(kernelId: string, seq: number): void {
    if (seq > 0) this.send({ type: "ack", kernel: kernelId, seq });
  }

  /** No owner listens to this kernel any more (it ended and was stored). */
  release(kernelId: string): void {
    this.routes.delete(kernelId);
    this.send({ type: "forget", kernel: kernelId });
  }

  send(request: AgentRequest): boolean {
    return this.link?.send(request) ?? false;
  }

  /** A request the agent answers with one message carrying the same requestId. */
  request(request: Extract<AgentRequest, { requestId: string }>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(request.requestId);
        reject(new HostAgentError(`host ${this.hostId}: no answer to ${request.type} within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(request.requestId, { resolve, reject, timer });
      if (!this.send(request)) {
        clearTimeout(timer);
        this.waiting.delete(request.requestId);
        reject(new HostAgentError(`host ${this.hostId}: not connected`));
      }
    });
  }

  async health(): Promise<AgentMessageOf<"health">> {
    await this.connect();
    const answer = await this.request({ type: "health", requestId: randomUUID() });
    if (answer.type !== "health") throw new HostAgentError(answer.type === "request_failed" ? answer.message : `unexpected answer ${answer.type} to health`);
    this.lastHealthReport = { report: answer, at: Date.now() };
    const byKernel = new Map<string, number>();
    for (const gpu of answer.gpus) {
      if (gpu.kernel !== null && gpu.utilization !== null) byKernel.set(gpu.kernel, Math.max(byKernel.get(gpu.kernel) ?? 0, gpu.utilization));
    }
    for (const [kernel, utilization] of byKernel) this.utilization.set(kernel, utilization);
    return answer;
  }

  /** The last health report and when it came (null before the first). */
  get lastHealth(): { report: AgentMessageOf<"health">; at: number } | null {
    return this.lastHealthReport;
  }

  /** A kernel's GPU utilisation (percent, highest of its GPUs) at the last sample; null without GPUs or NVML. */
  gpuUtilization(kernelId: string): number | null {
    return this.utilization.get(kernelId) ?? null;
  }

  /** This server lets go: the link closes, the agent keeps its kernels for its lease. */
  async detach(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.failWaiting("the lab is shutting down");
    const link = this.link;
    this.link = null;
    await link?.close();
    this.setState({ state: "disconnected" });
  }

  /** Ends the agent and every kernel it runs (tests; replacing an agent that runs other code). */
  async shutdownAgent(): Promise<void> {
    const link = this.link;
    // The agent ends its kernels and exits, which ends the link: wait for that before closing our end (a write in flight would hit a closed tty).
    if (link?.open && link.send({ type: "agent_shutdown" })) await link.ended(5000);
    await this.detach();
  }

  private stateWaiters = new Map<string, Array<(answer: Answer) => void>>();

  private nextState(kernelId: string): Promise<Answer> {
    return new Promise((resolve) => {
      const list = this.stateWaiters.get(kernelId) ?? [];
      list.push(resolve);
      this.stateWaiters.set(kernelId, list);
    });
  }

  /**
   * Opens a link; an agent found running other code (an older lab's) with no
   * kernel of its own is ended and started again with this lab's code. One
   * that still runs kernels is kept until they end (they are someone's work),
   * and new kernels start there meanwhile — the hosts page says so.
   */
  private async openLink(): Promise<AgentMessageOf<"agent_hello">> {
    const code = this.options.code ?? agentCode();
    for (let attempt = 0; ; attempt++) {
      const hello = await this.openOneLink(code);
      if (hello.codeHash === code.codeHash) return hello;
      const busy = hello.kernels.filter((kernel) => kernel.state !== "exited").length;
      if (busy > 0 || attempt >= 3) {
        this.options.log("warning", `host ${this.hostId}: its agent runs other code (${hello.codeHash.slice(0, 8)}, this lab ${code.codeHash.slice(0, 8)})${busy > 0 ? ` and ${busy} kernel(s); it is replaced once they end` : ""}`);
        return hello;
      }
      this.options.log("info", `host ${this.hostId}: replacing its agent, which runs other code (${hello.codeHash.slice(0, 8)}) and no kernel, with this lab's (${code.codeHash.slice(0, 8)})`);
      const link = this.link;
      this.link = null;
      // The old agent's exit ends the link (it removes its socket first): then the next bootstrap starts this lab's.
      if (link?.send({ type: "agent_shutdown" })) await link.ended(10_000);
      await link?.close();
    }
  }

  private async openOneLink(code: AgentCode): Promise<AgentMessageOf<"agent_hello">> {
    this.setState({ state: "connecting" });
    let opened: { link: AgentLink; hello: AgentMessageOf<"agent_hello"> };
    try {
      opened = await AgentLink.open(
        this.options.transport,
        this.options.settings,
        {
          message: (message) => this.onMessage(message),
          text: (text) => {
            const line = text.trim();
            if (line) this.options.log("info", `host ${this.hostId} link: ${line.slice(0, 2000)}`);
          },
          protocolError: (reason) => this.options.log("warning", `host ${this.hostId} agent protocol: ${reason}`),
          closed: (reason) => this.onClosed(opened.link, reason),
        },
        this.options.connectTimeoutMs,
        code,
      );
    } catch (error) {
      const output = error instanceof AgentLinkError ? error.output : "";
      const message = error instanceof Error ? error.message : String(error);
      this.setState({ state: "unreachable", error: message, output: output.slice(-4000), at: Date.now() });
      this.scheduleReconnect();
      throw new HostAgentError(message);
    }
    this.link = opened.link;
    this.reconnectAttempt = 0;
    this.setState({ state: "connected", hello: opened.hello, since: Date.now() });
    const known = new Map(opened.hello.kernels.map((kernel) => [kernel.kernel, kernel]));
    for (const [kernelId, route] of this.routes) {
      const kernel = known.get(kernelId);
      if (kernel) {
        this.send({ type: "resume", kernel: kernelId, afterSeq: route.lastSeq });
        // A start waiting in the GPU queue hears where it stands now (or that it runs).
        this.onMessage({ type: "kernel_state", kernel, requestId: null });
        route.handlers.relinked?.();
      } else {
        // The agent was replaced meanwhile (its lease ran out, the host rebooted): the kernel is gone.
        this.routes.delete(kernelId);
        route.handlers.exit({ code: null, signal: null, reason: "the host agent no longer runs this kernel (its lease expired or the host restarted)" }, route.lastSeq + 1);
      }
    }
    return opened.hello;
  }

  private onClosed(link: AgentLink, reason: string): void {
    if (this.link !== link) return;
    this.link = null;
    this.failWaiting(reason);
    if (this.closed) return;
    this.options.log("warning", `host ${this.hostId}: ${reason}; reconnecting (the agent keeps its kernels for its lease)`);
    this.setState({ state: "unreachable", error: reason, output: "", at: Date.now() });
    this.scheduleReconnect();
  }

  /** While kernels depend on it, the link is re-opened with growing pauses. */
  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer || this.routes.size === 0) return;
    const delay = RECONNECT_DELAYS_MS[Math.min(this.reconnectAttempt, RECONNECT_DELAYS_MS.length - 1)]!;
    this.reconnectAttempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect().catch(() => undefined); // a failure schedules the next try
    }, delay);
    this.reconnectTimer.unref();
  }

  private failWaiting(reason: string): void {
    for (const [id, waiter] of this.waiting) {
      clearTimeout(waiter.timer);
      waiter.reject(new HostAgentError(`host ${this.hostId}: ${reason}`));
      this.waiting.delete(id);
    }
  }

  private onMessage(message: AgentMessage): void {
    switch (message.type) {
      case "kernel_frame":
      case "kernel_console":
      case "kernel_bad_frame":
      case "kernel_exit": {
        const route = this.routes.get(message.kernel);
        // Replays may overlap what this server already has: each number is handed on once.
        if (!route || message.seq <= route.lastSeq) return;
        route.lastSeq = message.seq;
        if (message.type === "kernel_frame") route.handlers.frame(message.json, message.seq);
        else if (message.type === "kernel_console") route.handlers.console(message.text, message.seq);
        else if (message.type === "kernel_bad_frame") route.handlers.badFrame(message.reason, message.seq);
        else route.handlers.exit(message.exit, message.seq);
        return;
      }
      case "kernel_gap":
        this.routes.get(message.kernel)?.handlers.gap?.(message);
        return;
      case "kernel_state": {
        this.utilization.set(message.kernel.kernel, message.kernel.gpuUtilization);
        if (message.kernel.state === "exited") this.utilization.delete(message.kernel.kernel);
        this.routes.get(message.kernel.kernel)?.handlers.state?.(message.kernel);
        if (message.requestId && this.answer(message.requestId, message)) return;
        const waiters = this.stateWaiters.get(message.kernel.kernel);
        if (waiters?.length) {
          this.stateWaiters.delete(message.kernel.kernel);
          for (const wake of waiters) wake(message);
        }
        return;
      }
      case "interrupt_result":
      case "health":
      case "request_failed":
        this.answer(message.requestId, message);
        return;
      case "agent_log":
        this.options.log(message.level, `host ${this.hostId} agent: ${message.message}`);
        return;
      case "agent_hello":
        return; // only the first on a link matters (AgentLink.open)
    }
  }

  private answer(requestId: string, message: Answer): boolean {
    const waiter = this.waiting.get(requestId);
    if (!waiter) return false;
    clearTimeout(waiter.timer);
    this.waiting.delete(requestId);
    waiter.resolve(message);
    return true;
  }

  private setState(state: HostLinkState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}
