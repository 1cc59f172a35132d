/**
 * The lab's side of one host's agent: keeps a link open while kernels need
 * it (re-opening it after a drop, resuming every kernel from the last
 * sequence number this server processed), routes each kernel's sequenced
 * output to its owner exactly once, and turns requests that expect an answer
 * (start, interrupt, stop, health, configure) into promises.
 *
 * A link that stops answering (a stopped ssh client, a network that drops
 * packets without a reset, a frozen agent) is noticed by the lab itself, not
 * left to TCP or ssh keepalives: when the link has been silent for
 * PING_AFTER_MS the agent is asked for its health; silent for STALL_AFTER_MS
 * it is "stalled" (the notebooks of its kernels say so); silent for
 * FAIL_AFTER_MS it is closed and opened again, and its kernels resume.
 */
import { randomUUID } from "node:crypto";
import type { AgentKernel, AgentMessage, AgentMessageOf, AgentRequest, AgentSettings, GpuWait, SettingsNote } from "../core/protocol/agent-messages";
import { AgentLink, AgentLinkError, agentCode, type AgentCode, type AgentBootSettings, type LinkTransport } from "./agent-link";
import { plainLine } from "./terminal-text";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

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
  /** Open, but nothing has come from it since `silentSince` (epoch ms). */
  | { state: "stalled"; hello: AgentMessageOf<"agent_hello">; since: number; silentSince: number }
  | { state: "unreachable"; error: string; output: string; at: number };

export interface HostAgentOptions {
  hostId: string;
  transport: LinkTransport;
  settings: AgentBootSettings;
  log: Log;
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

type Answer = AgentMessageOf<"kernel_state" | "interrupt_result" | "health" | "request_failed" | "configured">;

const RECONNECT_DELAYS_MS = [250, 1000, 2000, 5000, 10_000];
const REQUEST_TIMEOUT_MS = 60_000;
/** A link silent this long is asked for the agent's health (an answer is the heartbeat). */
export const PING_AFTER_MS = 4_000;
/**
 * Silent this long (a ping unanswered for 4 s; the agent answers in milliseconds): stalled,
 * said at the next tick, so about 10 s after the last word — 15 s is what the README
 * promises, with room for a slow machine (measured 8.8–10.2 s here under load).
 */
export const STALL_AFTER_MS = 8_000;
/** Silent this long: the link has failed; it is closed and opened again (well within the 45 s the README promises). */
export const FAIL_AFTER_MS = 30_000;
const HEARTBEAT_TICK_MS = 2_000;

export class HostAgentError extends Error {}

/** The host has no GPUs for this kernel now (it refuses when full, or has fewer than asked): what it waits for. */
export class GpuRefusedError extends HostAgentError {
  constructor(
    message: string,
    readonly wait: GpuWait,
  ) {
    super(message);
  }
}

/** True while the link is open and the agent has said hello on it (it may be stalled). */
export function isLinked(state: HostLinkState): state is Extract<HostLinkState, { state: "connected" | "stalled" }> {
  return state.state === "connected" || state.state === "stalled";
}

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
  /** The kernel_states of kernels whose start waits (queued), in order, for startKernel to take. */
  private readonly mailboxes = new Map<string, StateMailbox>();
  /** When the open link last delivered anything (epoch ms). */
  private lastHeard = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  private pinging = false;
  /** Why the lab itself closed the open link (it stopped answering), for the reconnect's log and state. */
  private failing: string | null = null;
  private settingsNow: AgentBootSettings;
  private transportNow: LinkTransport;
  /** What the agent said of the settings the last link or reload brought: taken, or kept and why. */
  private notes: SettingsNote[] = [];

  constructor(readonly options: HostAgentOptions) {
    this.settingsNow = options.settings;
    this.transportNow = options.transport;
  }

  /** The settings the next link (or `configure`) gives the agent: the hosts file's. */
  get settings(): AgentBootSettings {
    return this.settingsNow;
  }

  get transport(): LinkTransport {
    return this.transportNow;
  }

  /** The last word of the agent on the hosts file's settings (empty before any). */
  get settingsNotes(): readonly SettingsNote[] {
    return this.notes;
  }

  get hostId(): string {
    return this.options.hostId;
  }

  get state(): HostLinkState {
    return this.current;
  }

  /** Kernels of this lab server live on this agent (running, or waiting to start). */
  get inUse(): boolean {
    return this.routes.size > 0;
  }

  onState(listener: (state: HostLinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The open link's hello, opening one (and starting the agent) if needed. */
  connect(): Promise<AgentMessageOf<"agent_hello">> {
    if (this.closed) return Promise.reject(new HostAgentError(`host ${this.hostId}: the lab is shutting down`));
    if (this.link?.open && isLinked(this.current)) return Promise.resolve(this.current.hello);
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
    // Opened before the request: a state that comes in the same read as the answer is not lost.
    this.mailboxes.set(kernelId, new StateMailbox());
    try {
      let answer = await this.request({ type: "start_kernel", requestId: randomUUID(), kernel: kernelId, ...request });
      // Queued: wait for the state that says it runs (or that it ended, removed from the queue or refused).
      while (answer.type === "kernel_state" && answer.kernel.state === "queued") answer = await this.nextState(kernelId);
      if (answer.type === "request_failed") throw answer.refusal ? new GpuRefusedError(answer.message, answer.refusal) : new HostAgentError(answer.message);
      if (answer.type !== "kernel_state") throw new HostAgentError(`unexpected answer ${answer.type} to start_kernel`);
      if (answer.kernel.state === "exited") {
        const reason = answer.kernel.exit?.reason ?? "the kernel ended before it started";
        throw answer.kernel.refusal ? new GpuRefusedError(reason, answer.kernel.refusal) : new HostAgentError(reason);
      }
      return answer.kernel;
    } catch (error) {
      this.routes.delete(kernelId);
      throw error;
    } finally {
      this.mailboxes.delete(kernelId);
    }
  }

  /**
   * Takes over a kernel the agent already runs (after a lab server restart):
   * everything after `afterSeq` is replayed, in order, then it streams live.
   * Null when the agent does not have it.
   */
  async attachKernel(kernelId: string, afterSeq: number, handlers: AgentKernelHandlers): Promise<AgentKernel | null> {
    await this.connect();
    // Asked, not read from the link's hello: that lists the kernels of its opening, and another lab server
    // may have started this one since (its notebook is taken over when that server stops).
    this.routes.set(kernelId, { handlers, lastSeq: afterSeq });
    try {
      const answer = await this.request({ type: "resume", requestId: randomUUID(), kernel: kernelId, afterSeq });
      if (answer.type === "kernel_state") return answer.kernel;
      this.routes.delete(kernelId);
      return null;
    } catch (error) {
      this.routes.delete(kernelId);
      throw error;
    }
  }

  /** Whether the agent has this kernel now (a link's hello lists only those of its opening); its stream is left as it is. */
  async hasKernel(kernelId: string): Promise<boolean> {
    await this.connect();
    const answer = await this.request({ type: "describe_kernel", requestId: randomUUID(), kernel: kernelId });
    return answer.type === "kernel_state";
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
  request(request: AgentRequest & { requestId: string }): Promise<Answer> {
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

  /**
   * The hosts file changed: the next link carries these settings and
   * transport; an open link's agent is told now (`configure`) and says what
   * it took and what it kept. An agent from before settings adoption (other
   * code) takes them only when it is replaced: null then.
   */
  async reconfigure(settings: AgentBootSettings, transport: LinkTransport): Promise<SettingsNote[] | null> {
    this.settingsNow = settings;
    this.transportNow = transport;
    const state = this.current;
    if (!this.link?.open || !isLinked(state)) return [];
    if (!state.hello.settings) return null;
    const answer = await this.request({ type: "configure", requestId: randomUUID(), settings: wireSettings(settings) });
    if (answer.type !== "configured") throw new HostAgentError(answer.type === "request_failed" ? answer.message : `unexpected answer ${answer.type} to configure`);
    this.heardNotes(answer.notes, "the reloaded hosts file");
    return answer.notes;
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
    this.stopHeartbeat();
    this.failWaiting("the lab is shutting down");
    for (const mailbox of this.mailboxes.values()) mailbox.fail(new HostAgentError(`host ${this.hostId}: the lab is shutting down`));
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

  /** The next kernel_state of a kernel whose start waits; rejected if the agent loses the kernel or the lab lets go. */
  private nextState(kernelId: string): Promise<Answer> {
    const mailbox = this.mailboxes.get(kernelId);
    return mailbox ? mailbox.take() : Promise.reject(new HostAgentError(`host ${this.hostId}: no start of ${kernelId} waits`));
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
        this.transportNow,
        this.settingsNow,
        {
          message: (message) => {
            this.heard();
            this.onMessage(message);
          },
          text: (text) => {
            this.heard();
            const line = plainLine(text);
            if (line) this.options.log("info", `host ${this.hostId} link: ${line.slice(0, 2000)}`);
          },
          protocolError: (reason) => {
            this.heard();
            this.options.log("warning", `host ${this.hostId} agent protocol: ${reason}`);
          },
          closed: (reason) => this.onClosed(opened.link, reason),
        },
        this.options.connectTimeoutMs,
        code,
      );
    } catch (error) {
      const output = error instanceof AgentLinkError ? error.output : "";
      const message = errorMessage(error);
      this.setState({ state: "unreachable", error: message, output: output.slice(-4000), at: Date.now() });
      this.scheduleReconnect();
      throw new HostAgentError(message);
    }
    this.link = opened.link;
    this.reconnectAttempt = 0;
    this.lastHeard = Date.now();
    this.failing = null;
    this.startHeartbeat();
    this.setState({ state: "connected", hello: opened.hello, since: Date.now() });
    this.heardNotes(opened.hello.notes ?? [], "this link");
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
        const reason = "the host agent no longer runs this kernel (its lease expired or the host restarted)";
        this.mailboxes.get(kernelId)?.fail(new HostAgentError(reason));
        route.handlers.exit({ code: null, signal: null, reason }, route.lastSeq + 1);
      }
    }
    return opened.hello;
  }

  private onClosed(link: AgentLink, closedReason: string): void {
    if (this.link !== link) return;
    this.link = null;
    const reason = this.failing ?? closedReason;
    this.failing = null;
    this.failWaiting(reason);
    if (this.closed) return;
    this.options.log("warning", `host ${this.hostId}: ${reason}; reconnecting (the agent keeps its kernels for its lease)`);
    this.setState({ state: "unreachable", error: reason, output: "", at: Date.now() });
    this.scheduleReconnect();
  }

  /** Something came from the open link: it answers (a stalled one has recovered). */
  private heard(): void {
    this.lastHeard = Date.now();
    const state = this.current;
    if (state.state !== "stalled") return;
    this.options.log("info", `host ${this.hostId}: the link answers again after ${Math.round((this.lastHeard - state.silentSince) / 1000)} s of silence`);
    this.setState({ state: "connected", hello: state.hello, since: state.since });
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_TICK_MS);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** Pings a silent link, marks it stalled, and fails it past FAIL_AFTER_MS (see the module comment). */
  private beat(): void {
    const link = this.link;
    const state = this.current;
    if (!link?.open || !isLinked(state) || this.failing !== null) return;
    const silentMs = Date.now() - this.lastHeard;
    if (silentMs >= FAIL_AFTER_MS) {
      this.failing = `the link to the host agent stopped answering (nothing for ${Math.round(silentMs / 1000)} s)`;
      this.options.log("warning", `host ${this.hostId}: ${this.failing}; closing it to connect again`);
      // Its end (closed) reconnects; a failure to end it is said, never left unhandled.
      link.close().catch((error: unknown) => this.options.log("error", `host ${this.hostId}: could not close the silent link: ${errorMessage(error)}`));
      return;
    }
    if (silentMs >= STALL_AFTER_MS && state.state === "connected") {
      this.options.log("warning", `host ${this.hostId}: the link is stalled (nothing for ${Math.round(silentMs / 1000)} s)`);
      this.setState({ state: "stalled", hello: state.hello, since: state.since, silentSince: this.lastHeard });
    }
    if (silentMs >= PING_AFTER_MS && !this.pinging) {
      this.pinging = true;
      this.health()
        .catch(() => undefined) // the answer is what counts; its absence is what the next beats see
        .finally(() => {
          this.pinging = false;
        });
    }
  }

  /** The agent's word on the settings a link or a reload brought: logged, and kept for the hosts page. */
  private heardNotes(notes: SettingsNote[], from: string): void {
    if (notes.length > 0) this.notes = notes;
    for (const note of notes) {
      this.options.log(note.applied ? "info" : "warning", `host ${this.hostId}: ${note.applied ? "the agent took" : "the agent kept"} from ${from}: ${note.message}`);
    }
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
        // One state may answer a request (a stop) and end a queued start's wait: both hear it.
        const answered = message.requestId !== null && this.answer(message.requestId, message);
        // The answer to the start itself is not mail (startKernel has it already).
        if (!answered || message.kernel.state !== "queued") this.mailboxes.get(message.kernel.kernel)?.put(message);
        return;
      }
      case "interrupt_result":
      case "health":
      case "request_failed":
      case "configured":
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

/** The part of a link's boot settings a running agent takes from a reloaded file. */
export function wireSettings(settings: AgentBootSettings): AgentSettings {
  const { leaseSeconds, bufferBytes, gpus, whenFull, interruptGraceMs, python } = settings;
  return { leaseSeconds, bufferBytes, gpus, whenFull, interruptGraceMs, python };
}

/** States in arrival order for one waiting start: put never waits, take waits for the next. */
class StateMailbox {
  private readonly mail: Answer[] = [];
  private waiter: { resolve: (answer: Answer) => void; reject: (error: Error) => void } | null = null;
  private error: Error | null = null;

  put(answer: Answer): void {
    if (this.waiter) {
      this.waiter.resolve(answer);
      this.waiter = null;
    } else this.mail.push(answer);
  }

  fail(error: Error): void {
    this.error = error;
    this.waiter?.reject(error);
    this.waiter = null;
  }

  take(): Promise<Answer> {
    const next = this.mail.shift();
    if (next) return Promise.resolve(next);
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}
