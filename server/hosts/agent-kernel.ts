/**
 * A kernel that a host agent owns, seen as a KernelProcess: requests become
 * `kernel_input` lines, interrupt and stop are in-band agent requests (the
 * agent escalates and says which step worked), and the kernel's numbered
 * output comes back validated with the kernel protocol. The launcher starts
 * one on its host (waiting in the GPU queue when the host says so) or takes
 * over one a previous lab server left running.
 */
import { randomUUID } from "node:crypto";
import { kernelMessageSchema, type KernelMessageOf, type KernelRequest } from "../core/protocol/kernel-messages";
import type { AgentKernel, GpuUse, GpuWait } from "../core/protocol/agent-messages";
import { describeGpuWait, UNKNOWN_HOLDER, type GpuWaitView, type HolderName } from "../core/protocol/hosts-model";
import type { KernelLinkTrouble } from "../core/protocol/notebook-model";
import { encodeKernelInput, KernelStartError } from "../kernel/kernel-channel";
import { KernelRefusedError, type KernelExit, type KernelLauncher, type KernelPlacement, type KernelProcess, type KernelProcessEvents } from "../kernel/kernel-process";
import { GpuRefusedError, type AgentKernelHandlers, type HostAgent, type HostLinkState } from "./host-agent";
import { plainText } from "./terminal-text";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

/** Names agent kernels as the owner of `notebookId` may see them (holder-names.ts); null: nobody asks for a notebook. */
export type NameKernels = (agentKernelIds: readonly string[], notebookId: string | null) => Promise<Map<string, HolderName>>;

const BOOT_OUTPUT_KEPT = 16 * 1024;
/**
 * Acknowledgements are paced: each is a write to the agent's link (a PTY),
 * and one per commit cost more server CPU than the cell's own messages. An
 * acknowledgement only frees the agent's buffer (a takeover resumes from the
 * stored position, never from the last acknowledgement), so the latest
 * position goes out at most this often.
 */
const ACK_INTERVAL_MS = 200;

export class AgentKernelProcess implements KernelProcess {
  private exited: KernelExit | null = null;
  private readonly exitWaiters: Array<() => void> = [];
  private seq = 0;
  /** The highest position the lab has stored, and the highest sent to the agent. */
  private acknowledged = 0;
  private ackSent = 0;
  private ackSentAt = 0;
  private ackTimer: NodeJS.Timeout | null = null;
  /**
   * The execute sent last, until the kernel says it started it (its "busy")
   * or ended it: a link that drops meanwhile may have lost it, so it is sent
   * again on the next link, and the kernel runs an execute id once.
   */
  private unconfirmed: Extract<KernelRequest, { type: "execute" }> | null = null;
  readonly placement: KernelPlacement;

  constructor(
    private readonly agent: HostAgent,
    readonly kernelId: string,
    private state: AgentKernel,
    private readonly log: Log,
    onThisMachine: boolean,
    private readonly hostLabel: string = agent.hostId,
  ) {
    this.placement = { hostId: agent.hostId, agentKernelId: kernelId, gpus: state.gpus, onThisMachine };
  }

  get pid(): number {
    return this.state.pid ?? -1;
  }

  get alive(): boolean {
    return this.exited === null;
  }

  get processedSeq(): number {
    return this.seq;
  }

  /** The handlers the host agent calls; `events` is where this kernel's session listens. */
  handlers(events: KernelProcessEvents, onFrame?: (json: string) => boolean): AgentKernelHandlers {
    return {
      frame: (json, seq) => {
        this.seq = seq;
        if (onFrame?.(json)) return;
        const parsed = parseKernelFrame(json);
        if (!parsed.ok) {
          events.protocolError(parsed.reason);
          return;
        }
        const message = parsed.message;
        if (this.unconfirmed !== null && (message.type === "status" || message.type === "execute_reply") && message.id === this.unconfirmed.id) this.unconfirmed = null;
        events.message(message);
      },
      console: (text, seq) => {
        this.seq = seq;
        events.console(text);
      },
      badFrame: (reason, seq) => {
        this.seq = seq;
        events.protocolError(reason);
      },
      exit: (exit, seq) => {
        this.seq = Math.max(this.seq, seq);
        this.exited = { exitCode: exit.code, signal: exit.signal, reason: exit.reason };
        for (const wake of this.exitWaiters.splice(0)) wake();
        events.exit(this.exited);
        this.agent.release(this.kernelId);
      },
      gap: (gap) => {
        const text = `[the lab lost ${gap.droppedMessages} output messages (${gap.droppedBytes} bytes) produced while it was disconnected: more than the host agent buffers]\n`;
        this.log("warning", `kernel ${this.kernelId}: ${text.trim()}`);
        events.console(text);
      },
      state: (state) => {
        this.state = state;
        this.placement.gpus = state.gpus;
      },
      relinked: () => {
        if (this.unconfirmed !== null && this.alive) {
          this.log("info", `kernel ${this.kernelId}: sending execute ${this.unconfirmed.id} again on the new link (the kernel runs it once)`);
          this.send(this.unconfirmed);
        }
      },
    };
  }

  send(request: KernelRequest): void {
    if (!this.alive) return;
    if (request.type === "execute") this.unconfirmed = request;
    this.agent.send({ type: "kernel_input", kernel: this.kernelId, line: encodeKernelInput(request).trimEnd() });
  }

  /** In-band: the agent sends SIGINT and escalates if the cell does not stop; which step worked is logged. */
  interrupt(): void {
    if (!this.alive) return;
    this.agent
      .request({ type: "interrupt", requestId: randomUUID(), kernel: this.kernelId, graceMs: null })
      .then((answer) => {
        if (answer.type === "interrupt_result" && answer.step !== "sigint" && answer.step !== "not-running") {
          this.log("warning", `kernel ${this.kernelId}: the cell ignored SIGINT; the agent ended the kernel with ${answer.step.toUpperCase()} after ${Math.round(answer.elapsedMs)} ms`);
        }
      })
      .catch((error: unknown) => this.log("warning", `interrupt of kernel ${this.kernelId}: ${errorMessage(error)}`));
  }

  requestStacks(): void {
    if (this.alive) this.agent.send({ type: "dump_stacks", kernel: this.kernelId });
  }

  async shutdown(graceMs = 2000): Promise<void> {
    if (!this.alive) return;
    this.send({ type: "shutdown" });
    if (await this.waitForExit(graceMs)) return;
    await this.kill(graceMs);
  }

  async kill(graceMs = 1000): Promise<void> {
    if (!this.alive) return;
    await this.agent.request({ type: "stop_kernel", requestId: randomUUID(), kernel: this.kernelId, graceMs }).catch(() => undefined);
    await this.waitForExit(graceMs + 5000);
  }

  acknowledge(seq: number): void {
    if (seq <= this.acknowledged) return;
    this.acknowledged = seq;
    if (this.ackTimer) return;
    const wait = this.ackSentAt + ACK_INTERVAL_MS - performance.now();
    if (wait <= 0) return this.sendAck();
    this.ackTimer = setTimeout(() => this.sendAck(), wait);
    this.ackTimer.unref();
  }

  private sendAck(): void {
    this.ackTimer = null;
    if (!this.alive || this.acknowledged <= this.ackSent) return;
    this.ackSent = this.acknowledged;
    this.ackSentAt = performance.now();
    this.agent.ack(this.kernelId, this.ackSent);
  }

  /** The host's link stalls or is being reopened: the kernel itself may run on (its agent keeps it). */
  onLinkTrouble(listener: (trouble: KernelLinkTrouble | null) => void): () => void {
    let last: string | null = null;
    return this.agent.onState((state) => {
      if (!this.alive) return;
      const trouble = linkTrouble(state, this.hostLabel);
      const key = trouble === null ? "" : `${trouble.state}:${trouble.since}`;
      if (key === (last ?? "")) return;
      last = key;
      listener(trouble);
    });
  }

  private waitForExit(timeoutMs: number): Promise<boolean> {
    if (!this.alive) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.exitWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

function parseKernelFrame(json: string): { ok: true; message: ReturnType<typeof kernelMessageSchema.parse> } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, reason: `frame is not JSON: ${(error as Error).message}` };
  }
  const parsed = kernelMessageSchema.safeParse(value);
  return parsed.success ? { ok: true, message: parsed.data } : { ok: false, reason: `invalid kernel message: ${parsed.error.message.slice(0, 500)}` };
}

/** A link state as a running kernel's notebook says it; null while the link answers. */
export function linkTrouble(state: HostLinkState, host: string): KernelLinkTrouble | null {
  switch (state.state) {
    case "stalled":
      return { state: "stalled", host, since: state.silentSince };
    case "unreachable":
      return { state: "reconnecting", host, since: state.at };
    case "connecting":
      return { state: "reconnecting", host, since: Date.now() };
    case "connected":
    case "disconnected": // the lab let go on purpose (it stops): nothing to tell a notebook
      return null;
  }
}

/** An agent's wait with the holders and those before it named for the asking notebook's owner. */
export async function nameWait(wait: GpuWait, host: string, name: NameKernels | null, notebookId: string | null): Promise<GpuWaitView> {
  const ids = [...wait.holders, ...wait.ahead].map((use) => use.kernel);
  const names = name && ids.length > 0 ? await name(ids, notebookId).catch(() => new Map<string, HolderName>()) : new Map<string, HolderName>();
  const view = (use: GpuUse) => ({ ...(names.get(use.kernel) ?? UNKNOWN_HOLDER), gpus: use.gpus, since: use.since });
  return { host, asked: wait.asked, free: wait.free, total: wait.total, holders: wait.holders.map(view), ahead: wait.ahead.map(view) };
}

/** Kernels on one configured host, through its agent. */
export function agentLauncher(
  agent: HostAgent,
  label: string,
  log: Log,
  onThisMachine: boolean,
  name: NameKernels | null = null,
): KernelLauncher {
  return {
    id: agent.hostId,
    label,
    describe: () => `${label} (through its host agent)`,
    start: async (events, options) => {
      const kernelId = `k-${randomUUID()}`;
      let bootOutput = "";
      let resolveHello!: (hello: KernelMessageOf<"hello">) => void;
      let rejectHello!: (error: Error) => void;
      const hello = new Promise<KernelMessageOf<"hello">>((resolve, reject) => {
        resolveHello = resolve;
        rejectHello = reject;
      });
      // The kernel may end before anyone awaits its hello (a start given up in the GPU queue): that is the start's error, said once, below.
      hello.catch(() => undefined);
      // Until its hello, what the kernel prints is kept for the error, and its exit fails the start.
      const starting: KernelProcessEvents = {
        message: (message) => (message.type === "hello" ? resolveHello(message) : events.message(message)),
        console: (text) => {
          bootOutput = (bootOutput + text).slice(-BOOT_OUTPUT_KEPT);
          events.console(text);
        },
        protocolError: events.protocolError,
        exit: (exit) => {
          rejectHello(new KernelStartError(exit.reason ?? `kernel exited with code ${exit.exitCode ?? "unknown"} before it started`, bootOutput));
          events.exit(exit);
        },
      };
      // Made before the start request: its first frames may arrive in the same read as the answer.
      const process = new AgentKernelProcess(agent, kernelId, queuedState(kernelId, options.gpus ?? 0), log, onThisMachine, label);
      const handlers = process.handlers(starting);
      const notebookId = options.signal?.aborted ? null : (options.notebookId ?? null);
      // Given up while it waits for GPUs: the agent takes it out of the queue, and the start fails with why.
      options.signal?.addEventListener("abort", () => void agent.request({ type: "stop_kernel", requestId: randomUUID(), kernel: kernelId, graceMs: 1000 }).catch(() => undefined), { once: true });
      // Each place in the queue is named (asynchronously): a later one never gives way to an earlier one.
      let told = 0;
      const queued = (kernel: AgentKernel) => {
        if (kernel.state !== "queued" || kernel.position === null) return;
        const position = kernel.position;
        const mine = ++told;
        const named = kernel.wait ? nameWait(kernel.wait, label, name, notebookId) : Promise.resolve(null);
        named
          .then((wait) => {
            if (mine === told) options.onQueued?.({ position, agentKernelId: kernelId, wait });
          })
          .catch((error: unknown) => log("warning", `kernel ${kernelId}: its place in the GPU queue was not shown: ${errorMessage(error)}`));
      };
      await agent
        .startKernel(kernelId, { gpus: options.gpus ?? 0, cwd: options.cwd ?? null, env: {} }, {
          ...handlers,
          state: (kernel) => {
            queued(kernel);
            handlers.state?.(kernel);
          },
        })
        .catch(async (error: unknown) => {
          told++; // no queue place after the answer
          if (error instanceof GpuRefusedError) {
            const wait = await nameWait(error.wait, label, name, notebookId);
            throw new KernelRefusedError(describeGpuWait(wait), wait);
          }
          throw new KernelStartError(plainText(errorMessage(error)).trim(), "");
        });
      told++;
      const timeoutMs = options.startTimeoutMs ?? 60_000;
      const timer = setTimeout(() => rejectHello(new KernelStartError(`kernel did not start within ${timeoutMs} ms`, bootOutput)), timeoutMs);
      try {
        return { process, hello: await hello };
      } catch (error) {
        await process.kill().catch(() => undefined);
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    resume: async (agentKernelId, afterSeq, events) => {
      const process = new AgentKernelProcess(agent, agentKernelId, queuedState(agentKernelId, 0), log, onThisMachine, label);
      const state = await agent.attachKernel(agentKernelId, afterSeq, process.handlers(events));
      if (!state) return null;
      process.handlers(events).state?.(state);
      return process;
    },
  };
}

/** A kernel's state before the agent has said anything about it. */
function queuedState(kernel: string, gpus: number): AgentKernel {
  return { kernel, state: "queued", pid: null, position: null, gpus: [], gpusRequested: gpus, firstSeq: 1, lastSeq: 0, startedAt: null, gpuUtilization: null, exit: null };
}
