/**
 * A kernel's questions and answers beside its cell runs: a ping, every
 * process's Python stacks, and the editor's completion and inspection. Each
 * is sent with an id and waits for its reply (PendingReplies), or gives up.
 * Separate from KernelSession, which runs cells and the kernel's lifecycle:
 * these never queue behind a cell.
 */
import { randomUUID } from "node:crypto";
import type { KernelMessageOf, KernelRequest } from "../core/protocol/kernel-messages";
import type { KernelProcess } from "./kernel-process";
import type { ProcessStack } from "./stack-summary";
import { PendingReplies } from "./pending-replies";

const STACKS_ANSWER_MS = 5_000;
/**
 * How long an editor waits for a completion before it falls back to words of
 * the cell: long enough for jedi's first answer (it reads the modules it
 * completes from), short enough that Tab never feels stuck.
 */
export const ASSIST_ANSWER_MS = 3_000;

/** The replies these requests wait for. */
export type KernelReply = KernelMessageOf<"pong" | "stacks" | "complete_reply" | "inspect_reply">;

export interface AskedKernel {
  /** The kernel's process while it lives; null otherwise. */
  channel(): Pick<KernelProcess, "alive" | "send"> | null;
  /** Idle, with no cell running or waiting: completion must never wait behind a running cell. */
  idle(): boolean;
}

export class KernelRequests {
  private readonly pings = new PendingReplies<true>();
  private readonly stacks = new PendingReplies<ProcessStack[]>();
  private readonly assists = new PendingReplies<KernelMessageOf<"complete_reply" | "inspect_reply">>();

  constructor(private readonly kernel: AskedKernel) {}

  /** Round trip through the kernel's reader thread and main loop. */
  async ping(timeoutMs = 5000): Promise<void> {
    const channel = this.alive();
    if (!channel) throw new Error("kernel is not running");
    const id = randomUUID();
    if ((await this.pings.ask(id, () => channel.send({ type: "ping", id }), timeoutMs)) === null) throw new Error("ping timed out");
  }

  /** Python stacks of the kernel and every registered rank, answered even while a cell runs; null when it does not answer. */
  collectStacks(timeoutMs = STACKS_ANSWER_MS): Promise<ProcessStack[] | null> {
    const channel = this.alive();
    if (!channel) return Promise.resolve(null);
    const id = randomUUID();
    return this.stacks.ask(id, () => channel.send({ type: "stacks", id }), timeoutMs);
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

  /** A reply off the wire, to the request waiting for it. */
  answer(message: KernelReply): void {
    switch (message.type) {
      case "pong":
        return this.pings.answer(message.id, true);
      case "stacks":
        return this.stacks.answer(message.id, message.processes);
      case "complete_reply":
      case "inspect_reply":
        return this.assists.answer(message.id, message);
    }
  }

  private alive(): Pick<KernelProcess, "alive" | "send"> | null {
    const channel = this.kernel.channel();
    return channel?.alive ? channel : null;
  }

  private askIdle(request: Extract<KernelRequest, { type: "complete" | "inspect" }>, timeoutMs: number): Promise<KernelMessageOf<"complete_reply" | "inspect_reply"> | null> {
    const channel = this.alive();
    if (!channel || !this.kernel.idle()) return Promise.resolve(null);
    return this.assists.ask(request.id, () => channel.send(request), timeoutMs);
  }
}
