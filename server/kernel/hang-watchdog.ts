/**
 * The hang watchdog of a kernel's running cell: a cell with no output,
 * metric or heartbeat for `hangAfterMs` gets one report of every process's
 * Python stacks (asked of the kernel; when it does not answer, Ctrl-\ on its
 * tty prints what it can). Separate from KernelSession: one timer and one
 * diagnosis, not the kernel's lifecycle.
 */
import type { Execution } from "./kernel-execution";
import { summarizeProcess, type ProcessStack } from "./stack-summary";

export const DEFAULT_HANG_AFTER_MS = 120_000;

export interface HangWatchdogOptions {
  hangAfterMs?: number;
  /** The cell running now (null: none). */
  running: () => Execution | null;
  /** Every process's stacks from the kernel; null when it did not answer. */
  collectStacks: () => Promise<ProcessStack[] | null>;
  /** Ctrl-\ on the kernel's tty: faulthandler prints the stacks there. */
  requestTtyStacks: () => void;
}

export class HangWatchdog {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: HangWatchdogOptions) {}

  private get hangAfterMs(): number {
    return this.options.hangAfterMs ?? DEFAULT_HANG_AFTER_MS;
  }

  /** The running cell was heard from: its quiet period starts again (and may be reported again). */
  progress(): void {
    const running = this.options.running();
    if (!running) return;
    running.lastProgressAt = performance.now();
    running.diagnosed = false;
  }

  /** One timer per running cell, re-armed for the remaining quiet time rather than on every chunk. */
  arm(delayMs = this.hangAfterMs): void {
    if (this.timer || !Number.isFinite(this.hangAfterMs)) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, delayMs);
    this.timer.unref();
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    const execution = this.options.running();
    if (!execution) return;
    const idleMs = performance.now() - execution.lastProgressAt;
    if (idleMs < this.hangAfterMs || execution.diagnosed) {
      this.arm(execution.diagnosed ? this.hangAfterMs : this.hangAfterMs - idleMs);
      return;
    }
    execution.diagnosed = true;
    const processes = await this.options.collectStacks();
    if (this.options.running() !== execution) return;
    if (!processes) this.options.requestTtyStacks(); // the kernel is wedged: faulthandler prints on the tty
    const found = processes ?? [];
    execution.sink.hang?.({ idleMs, processes: found, summary: found.map(summarizeProcess), answeredBy: processes ? "kernel" : "tty" });
    this.arm();
  }
}
