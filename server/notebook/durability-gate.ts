/**
 * Durable before visible: a viewer is sent an event only once every write
 * queued before it has been committed, so nothing a browser has shown can
 * be missing from the database after a crash.
 *
 * Group commit: events that arrive while a commit is in flight wait for the
 * next one together, so a cell printing thousands of lines a second costs a
 * commit per batch, not per line, and the kernel is never blocked (only the
 * viewers' copy waits).
 */
export class DurabilityGate<T> {
  private pending: T[] = [];
  private waiters: Array<() => void> = [];
  private committing = false;
  private closed = false;

  /**
   * @param commit writes everything queued so far; its failure has already been reported by the writer,
   *   and the events are released anyway (holding them forever would hide the rest of the run).
   * @param release sends one event to the viewers, in the order held.
   */
  constructor(
    private readonly commit: () => Promise<void>,
    private readonly release: (item: T) => void,
  ) {}

  hold(item: T): void {
    if (this.closed) return;
    this.pending.push(item);
    this.schedule();
  }

  /** Resolves once everything handed to the writer before this call is committed (and held events released). */
  durable(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  /** Releases nothing more; a commit in flight still completes. */
  close(): void {
    this.closed = true;
    this.pending = [];
  }

  private schedule(): void {
    if (this.committing) return;
    this.committing = true;
    // A microtask later, so events emitted in the same burst share the commit.
    queueMicrotask(() => void this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0 || this.waiters.length > 0) {
      const items = this.pending;
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      await this.commit().catch(() => undefined);
      if (!this.closed) for (const item of items) this.release(item);
      for (const wake of waiters) wake();
    }
    this.committing = false;
  }
}
