/**
 * Where each kernel's sequenced output goes on this lab server: to the
 * handlers of its owner, each sequence number once (a replay after a
 * reconnect may overlap what was handed on already). Separate from
 * HostAgent, which keeps the link: this only routes what comes over it.
 */
import type { AgentKernel, AgentMessageOf } from "../core/protocol/agent-messages";

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

export interface Route {
  handlers: AgentKernelHandlers;
  /** The last sequence number handed to the handlers. */
  lastSeq: number;
}

type Sequenced = AgentMessageOf<"kernel_frame" | "kernel_console" | "kernel_bad_frame" | "kernel_exit">;

export class KernelRoutes {
  private readonly routes = new Map<string, Route>();

  /** Kernels of this lab server live on the agent (running, or waiting to start). */
  get size(): number {
    return this.routes.size;
  }

  /** The owner of `kernelId` hears its output after `lastSeq`. */
  set(kernelId: string, handlers: AgentKernelHandlers, lastSeq: number): void {
    this.routes.set(kernelId, { handlers, lastSeq });
  }

  get(kernelId: string): Route | undefined {
    return this.routes.get(kernelId);
  }

  delete(kernelId: string): void {
    this.routes.delete(kernelId);
  }

  /**
   * A new link's hello lists the kernels the agent runs: each of this
   * server's that it still has resumes from its last sequence number
   * (`resume`), then its owner is told it was relinked; one it no longer has
   * (the agent was replaced meanwhile: its lease ran out, the host rebooted)
   * has ended (`gone`, then its owner hears the exit).
   */
  relink(running: readonly AgentKernel[], resume: (kernel: AgentKernel, afterSeq: number) => void, gone: (kernelId: string, reason: string) => void): void {
    const known = new Map(running.map((kernel) => [kernel.kernel, kernel]));
    for (const [kernelId, route] of this.routes) {
      const kernel = known.get(kernelId);
      if (kernel) {
        resume(kernel, route.lastSeq);
        route.handlers.relinked?.();
      } else {
        this.routes.delete(kernelId);
        const reason = "the host agent no longer runs this kernel (its lease expired or the host restarted)";
        gone(kernelId, reason);
        route.handlers.exit({ code: null, signal: null, reason }, route.lastSeq + 1);
      }
    }
  }

  /** One sequenced message to its kernel's owner, unless it was handed on already. */
  deliver(message: Sequenced): void {
    const route = this.routes.get(message.kernel);
    if (!route || message.seq <= route.lastSeq) return;
    route.lastSeq = message.seq;
    if (message.type === "kernel_frame") route.handlers.frame(message.json, message.seq);
    else if (message.type === "kernel_console") route.handlers.console(message.text, message.seq);
    else if (message.type === "kernel_bad_frame") route.handlers.badFrame(message.reason, message.seq);
    else route.handlers.exit(message.exit, message.seq);
  }
}
