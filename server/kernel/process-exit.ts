/**
 * What PtyProcess and PipeProcess share about a child's end: its exit as
 * one type, the waiters for it, and a signal to its whole process group.
 */

export interface PtyExit {
  exitCode: number;
  /** The signal number that ended the process, if a signal did. */
  signal: number | null;
}

/** A child's exit, once it comes: whoever waits for it (within a timeout) is woken then. */
export class ExitLatch {
  private exit: PtyExit | null = null;
  private readonly waiters: Array<(exit: PtyExit) => void> = [];

  get value(): PtyExit | null {
    return this.exit;
  }

  /** Records the exit and wakes every waiter; false when it was already recorded. */
  settle(exit: PtyExit): boolean {
    if (this.exit) return false;
    this.exit = exit;
    for (const wake of this.waiters.splice(0)) wake(exit);
    return true;
  }

  /** The exit, or null when it has not come within `timeoutMs`. */
  wait(timeoutMs: number): Promise<PtyExit | null> {
    if (this.exit) return Promise.resolve(this.exit);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      this.waiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }
}

/** Signals every process in `pid`'s group (a child that leads its own: a PTY's session, a detached spawn); gone already is fine. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
