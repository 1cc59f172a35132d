/**
 * Idle shutdown: a timer that looks at every live kernel and ends those that
 * kernel-policy.ts says have been unused (nothing running or queued, nobody
 * viewing) for the configured period. The notebook is not touched; its
 * viewers, when they come back, read why the kernel is gone.
 */
import { cullDecision, idleShutdownReason, kernelUse } from "./kernel-policy";
import type { KernelRegistry } from "./kernel-registry";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

export interface KernelCullerOptions {
  log?: Log;
  clock?: () => number;
}

/** A tenth of the period (a 60 min period is enforced within 30 s), never busier than every 50 ms. */
export function sweepIntervalMs(idleShutdownMs: number): number {
  return Math.min(30_000, Math.max(50, idleShutdownMs / 10));
}

export class KernelCuller {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly registry: KernelRegistry, private readonly options: KernelCullerOptions = {}) {}

  start(): void {
    const idleMs = this.registry.limits.idleShutdownMs;
    if (idleMs === null || this.timer) return;
    this.timer = setInterval(() => this.sweep(), sweepIntervalMs(idleMs));
    // The lab's own shutdown stops kernels; this timer must not keep a finished process alive.
    this.timer.unref();
  }

  /** One look at every live kernel; the shutdowns it began. Decision and shutdown happen in the same tick, so nothing can start in between. */
  sweep(): number {
    const idleMs = this.registry.limits.idleShutdownMs;
    if (idleMs === null) return 0;
    const now = (this.options.clock ?? Date.now)();
    const warnMs = Math.min(this.registry.limits.idleWarningMs ?? 5 * 60_000, idleMs);
    this.registry.noteGpuUse();
    let ended = 0;
    for (const [notebookId, facts] of this.registry.live()) {
      const decision = cullDecision(kernelUse(facts), now, idleMs, warnMs);
      if (decision.action === "warn") {
        this.registry.warn(notebookId, decision.shutdownAt);
        continue;
      }
      if (decision.action === "keep") {
        this.registry.warn(notebookId, null);
        continue;
      }
      ended += 1;
      this.options.log?.("info", `kernel of notebook ${notebookId} shut down after ${Math.round(decision.idleMs / 1000)} s unused`);
      this.registry.shutdown(notebookId, idleShutdownReason(idleMs)).catch((error: unknown) => {
        this.options.log?.("error", `idle shutdown of notebook ${notebookId}'s kernel failed: ${errorMessage(error)}`);
      });
    }
    return ended;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
