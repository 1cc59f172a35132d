/**
 * The lab's side of one host's agent: keeps a link open while kernels need
 * it (re-opening it after a drop, resuming every kernel from the last
 * sequence number this server processed), routes each kernel's sequenced
 * output to its owner exactly once, and turns requests that expect an answer
 * (start, interrupt, stop, health, configure) into promises.
 *
 * A link that stops answering (a stopped ssh client, a network that drops
 * packets without a reset, a frozen agent) is noticed by the lab itself
 * (link-heartbeat.ts): it is closed and opened again, and its kernels resume.
 * Routing output (kernel-routes.ts) and pairing requests with answers
 * (agent-requests.ts) are their own modules; this class keeps the link.
 */
import { randomUUID } from "node:crypto";
import type { AgentKernel, AgentMessage, AgentMessageOf, AgentRequest, SettingsNote } from "../core/protocol/agent-messages";
import { AgentLink, AgentLinkError, agentCode, type AgentCode, type AgentBootSettings, type LinkTransport } from "./agent-link";
import { plainLine } from "./terminal-text";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";
import { AgentRequests, GpuRefusedError, HostAgentError, type Answer } from "./agent-requests";
import { AgentGpuUse } from "./agent-gpu-use";
import { KernelRoutes, type AgentKernelHandlers } from "./kernel-routes";
import { isLinked, type HostLinkState } from "./host-link-state";
import { LinkHeartbeat } from "./link-heartbeat";
import { ReconnectBackoff } from "./reconnect-backoff";
import { AgentSettingsState, wireSettings } from "./agent-settings-state";
import { codeVerdict } from "./agent-code-verdict";

export { GpuRefusedError, HostAgentError } from "./agent-requests";
export type { AgentKernelHandlers } from "./kernel-routes";
export { isLinked, type HostLinkState } from "./host-link-state";
export { FAIL_AFTER_MS, PING_AFTER_MS, STALL_AFTER_MS } from "./link-heartbeat";
export { wireSettings } from "./agent-settings-state";

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

export class HostAgent {
  private link: AgentLink | null = null;
  private connecting: Promise<AgentMessageOf<"agent_hello">> | null = null;
  private current: HostLinkState = { state: "disconnected" };
  private readonly routes = new KernelRoutes();
  private readonly requests: AgentRequests;
  private readonly listeners = new Set<(state: HostLinkState) => void>();
  private readonly backoff = new ReconnectBackoff();
  private closed = false;
  private readonly gpuUse = new AgentGpuUse();
  private readonly heartbeat: LinkHeartbeat;
  private readonly settingsState: AgentSettingsState;

  constructor(readonly options: HostAgentOptions) {
    this.settingsState = new AgentSettingsState({ settings: options.settings, transport: options.transport }, options.hostId, options.log);
    this.requests = new AgentRequests(options.hostId);
    this.heartbeat = new LinkHeartbeat({
      linked: () => (this.link?.open && isLinked(this.current) ? this.current : null),
      ping: () => this.health(),
      stalled: (silentSince, silentMs) => {
        const state = this.current;
        if (state.state !== "connected") return;
        this.options.log("warning", `host ${this.hostId}: the link is stalled (nothing for ${Math.round(silentMs / 1000)} s)`);
        this.setState({ state: "stalled", hello: state.hello, since: state.since, silentSince });
      },
      failed: (reason) => {
        this.options.log("warning", `host ${this.hostId}: ${reason}; closing it to connect again`);
        // Its end (closed) reconnects; a failure to end it is said, never left unhandled.
        this.link?.close().catch((error: unknown) => this.options.log("error", `host ${this.hostId}: could not close the silent link: ${errorMessage(error)}`));
      },
    });
  }

  /** The settings the next link (or `configure`) gives the agent: the hosts file's. */
  get settings(): AgentBootSettings {
    return this.settingsState.settings;
  }

  get transport(): LinkTransport {
    return this.settingsState.transport;
  }

  /** The last word of the agent on the hosts file's settings (empty before any). */
  get settingsNotes(): readonly SettingsNote[] {
    return this.settingsState.lastNotes;
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
    this.routes.set(kernelId, handlers, 0);
    // Opened before the request: a state that comes in the same read as the answer is not lost.
    this.requests.openStart(kernelId);
    try {
      let answer = await this.request({ type: "start_kernel", requestId: randomUUID(), kernel: kernelId, ...request });
      // Queued: wait for the state that says it runs (or that it ended, removed from the queue or refused).
      while (answer.type === "kernel_state" && answer.kernel.state === "queued") answer = await this.requests.nextState(kernelId);
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
      this.requests.closeStart(kernelId);
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
    this.routes.set(kernelId, handlers, afterSeq);
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
    return this.requests.ask(request, () => this.send(request));
  }

  /**
   * The hosts file changed: the next link carries these settings and
   * transport; an open link's agent is told now (`configure`) and says what
   * it took and what it kept. An agent from before settings adoption (other
   * code) takes them only when it is replaced: null then.
   */
  async reconfigure(settings: AgentBootSettings, transport: LinkTransport): Promise<SettingsNote[] | null> {
    this.settingsState.update(settings, transport);
    const state = this.current;
    if (!this.link?.open || !isLinked(state)) return [];
    if (!state.hello.settings) return null;
    const answer = await this.request({ type: "configure", requestId: randomUUID(), settings: wireSettings(settings) });
    if (answer.type !== "configured") throw new HostAgentError(answer.type === "request_failed" ? answer.message : `unexpected answer ${answer.type} to configure`);
    this.settingsState.heard(answer.notes, "the reloaded hosts file");
    return answer.notes;
  }

  async health(): Promise<AgentMessageOf<"health">> {
    await this.connect();
    const answer = await this.request({ type: "health", requestId: randomUUID() });
    if (answer.type !== "health") throw new HostAgentError(answer.type === "request_failed" ? answer.message : `unexpected answer ${answer.type} to health`);
    this.gpuUse.health(answer);
    return answer;
  }

  /** The last health report and when it came (null before the first). */
  get lastHealth(): { report: AgentMessageOf<"health">; at: number } | null {
    return this.gpuUse.lastHealth;
  }

  /** A kernel's GPU utilisation (percent, highest of its GPUs) at the last sample; null without GPUs or NVML. */
  gpuUtilization(kernelId: string): number | null {
    return this.gpuUse.of(kernelId);
  }

  /** This server lets go: the link closes, the agent keeps its kernels for its lease. */
  async detach(): Promise<void> {
    this.closed = true;
    this.backoff.cancel();
    this.heartbeat.stop();
    this.requests.failAll("the lab is shutting down");
    this.requests.failStarts(new HostAgentError(`host ${this.hostId}: the lab is shutting down`));
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
      const verdict = codeVerdict(this.hostId, hello, code, attempt);
      if (verdict.kind === "keep") this.options.log("warning", verdict.message);
      if (verdict.kind !== "replace") return hello;
      this.options.log("info", verdict.message);
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
        this.settingsState.transport,
        this.settingsState.settings,
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
    this.backoff.reset();
    this.heartbeat.start();
    this.setState({ state: "connected", hello: opened.hello, since: Date.now() });
    this.settingsState.heard(opened.hello.notes ?? [], "this link");
    this.routes.relink(
      opened.hello.kernels,
      (kernel, afterSeq) => {
        this.send({ type: "resume", kernel: kernel.kernel, afterSeq });
        // A start waiting in the GPU queue hears where it stands now (or that it runs).
        this.onMessage({ type: "kernel_state", kernel, requestId: null });
      },
      (kernelId, reason) => this.requests.failStarts(new HostAgentError(reason), kernelId),
    );
    return opened.hello;
  }

  private onClosed(link: AgentLink, closedReason: string): void {
    if (this.link !== link) return;
    this.link = null;
    const reason = this.heartbeat.takeFailure() ?? closedReason;
    this.requests.failAll(reason);
    if (this.closed) return;
    this.options.log("warning", `host ${this.hostId}: ${reason}; reconnecting (the agent keeps its kernels for its lease)`);
    this.setState({ state: "unreachable", error: reason, output: "", at: Date.now() });
    this.scheduleReconnect();
  }

  /** Something came from the open link: it answers (a stalled one has recovered). */
  private heard(): void {
    this.heartbeat.heard();
    const state = this.current;
    if (state.state !== "stalled") return;
    this.options.log("info", `host ${this.hostId}: the link answers again after ${Math.round((this.heartbeat.heardAt - state.silentSince) / 1000)} s of silence`);
    this.setState({ state: "connected", hello: state.hello, since: state.since });
  }

  /** While kernels depend on it, the link is re-opened with growing pauses. */
  private scheduleReconnect(): void {
    if (this.closed || this.routes.size === 0) return;
    this.backoff.schedule(() => void this.connect().catch(() => undefined)); // a failure schedules the next try
  }


  private onMessage(message: AgentMessage): void {
    switch (message.type) {
      case "kernel_frame":
      case "kernel_console":
      case "kernel_bad_frame":
      case "kernel_exit": {
        // Replays may overlap what this server already has: each number is handed on once.
        this.routes.deliver(message);
        return;
      }
      case "kernel_gap":
        this.routes.get(message.kernel)?.handlers.gap?.(message);
        return;
      case "kernel_state": {
        this.gpuUse.kernelState(message.kernel);
        this.routes.get(message.kernel.kernel)?.handlers.state?.(message.kernel);
        // One state may answer a request (a stop) and end a queued start's wait: both hear it.
        const answered = message.requestId !== null && this.requests.answer(message.requestId, message);
        // The answer to the start itself is not mail (startKernel has it already).
        if (!answered || message.kernel.state !== "queued") this.requests.mail(message.kernel.kernel, message);
        return;
      }
      case "interrupt_result":
      case "health":
      case "request_failed":
      case "configured":
        this.requests.answer(message.requestId, message);
        return;
      case "agent_log":
        this.options.log(message.level, `host ${this.hostId} agent: ${message.message}`);
        return;
      case "agent_hello":
        return; // only the first on a link matters (AgentLink.open)
    }
  }

  private setState(state: HostLinkState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}
