/**
 * Requests a host agent answers: each carries a requestId and waits for the
 * one message with the same id (or a timeout, or the link's end), and a
 * start that waits in the agent's GPU queue reads its kernel's states from a
 * mailbox in arrival order. Separate from HostAgent, which keeps the link:
 * this only pairs questions with answers.
 */
import type { AgentMessageOf, GpuWait } from "../core/protocol/agent-messages";

/** What answers a request. */
export type Answer = AgentMessageOf<"kernel_state" | "interrupt_result" | "health" | "request_failed" | "configured">;

export const REQUEST_TIMEOUT_MS = 60_000;

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

interface Waiter {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class AgentRequests {
  private readonly waiting = new Map<string, Waiter>();
  /** The kernel_states of kernels whose start waits (queued), in order, for the start to take. */
  private readonly starts = new Map<string, StateMailbox>();

  /** `hostId` names the host in every refusal. */
  constructor(private readonly hostId: string) {}

  /** Sends the request (`send`: false when there is no link) and waits for its answer. */
  ask(request: { type: string; requestId: string }, send: () => boolean): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(request.requestId);
        reject(new HostAgentError(`host ${this.hostId}: no answer to ${request.type} within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(request.requestId, { resolve, reject, timer });
      if (!send()) {
        clearTimeout(timer);
        this.waiting.delete(request.requestId);
        reject(new HostAgentError(`host ${this.hostId}: not connected`));
      }
    });
  }

  /** The answer to `requestId`; false when nobody waits for it (any more). */
  answer(requestId: string, message: Answer): boolean {
    const waiter = this.waiting.get(requestId);
    if (!waiter) return false;
    clearTimeout(waiter.timer);
    this.waiting.delete(requestId);
    waiter.resolve(message);
    return true;
  }

  /** A start of `kernelId` waits: its states are kept from now (opened before the request, so none is lost). */
  openStart(kernelId: string): void {
    this.starts.set(kernelId, new StateMailbox());
  }

  closeStart(kernelId: string): void {
    this.starts.delete(kernelId);
  }

  /** A kernel_state for the start of its kernel, if one waits. */
  mail(kernelId: string, state: Answer): void {
    this.starts.get(kernelId)?.put(state);
  }

  /** The start of `kernelId` fails (the agent lost the kernel); with no `kernelId`, every waiting start (the lab lets go). */
  failStarts(error: Error, kernelId?: string): void {
    if (kernelId !== undefined) this.starts.get(kernelId)?.fail(error);
    else for (const mailbox of this.starts.values()) mailbox.fail(error);
  }

  /** The next kernel_state of a kernel whose start waits; rejected if the agent loses the kernel or the lab lets go. */
  nextState(kernelId: string): Promise<Answer> {
    const mailbox = this.starts.get(kernelId);
    return mailbox ? mailbox.take() : Promise.reject(new HostAgentError(`host ${this.hostId}: no start of ${kernelId} waits`));
  }

  /** Every request still waiting fails with `reason` (the link ended, or the lab lets go). */
  failAll(reason: string): void {
    for (const [id, waiter] of this.waiting) {
      clearTimeout(waiter.timer);
      waiter.reject(new HostAgentError(`host ${this.hostId}: ${reason}`));
      this.waiting.delete(id);
    }
  }
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
