/**
 * Durable before visible: a viewer is sent an event only once every write
 * queued before it has been committed, so nothing a browser has shown can
 * be missing from the database after a crash.
 *
 * Group commit: events that arrive while a commit is in flight wait for the
 * next one together, so a cell printing thousands of lines a second costs a
 * commit per batch, not per line, and the kernel is never blocked (only the
 * viewers' copy waits).
 *
 * Settling: an event of a run's progress (queued, started, its old outputs
 * cleared, an output) may wait up to `settleMs` for company. A cell that
 * ends within that time (most cells people re-run are quick) then costs one
 * commit and one packet to each viewer, not three; any other event (the
 * run's end among them), or anyone waiting on `durable()`, commits at once,
 * and the settling events go with it in order.
 */
/**
 * The default window (MGPULAB_SETTLE_MS). It was off for a while: chaos long runs 5 and 6 met a
 * spurious source conflict with it, which was the page's (an edit typed between a save's answer
 * and its event: RELIABILITY.md, fix 14), fixed there.
 */
export const SETTLE_MS = 3;

export class DurabilityGate<T> {
  private pending: T[] = [];
  private waiters: Array<() => void> = [];
  private committing = false;
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  /**
   * @param commit writes everything queued so far; its failure has already been reported by the writer,
   *   and the events are released anyway (holding them forever would hide the rest of the run).
   * @param release sends one event to the viewers, in the order held.
   * @param settleMs how long a settling event may wait for the next one (0: commit every event at once).
   */
  constructor(
    private readonly commit: () => Promise<void>,
    private readonly release: (item: T) => void,
    private readonly settleMs = SETTLE_MS,
  ) {}

  /** `settles`: the item may wait up to settleMs for the next commit (see above). */
  hold(item: T, settles = false): void {
    if (this.closed) return;
    this.pending.push(item);
    this.schedule(settles);
  }

  /** Resolves once everything handed to the writer before this call is committed (and held events released); commits now. */
  durable(): Promise<void> {
    return this.wait(false);
  }

  /** As durable(), without hurrying the commit: it comes within settleMs, or sooner with the next urgent event. */
  settled(): Promise<void> {
    return this.wait(true);
  }

  /** Releases nothing more; a commit in flight still completes. */
  close(): void {
    this.closed = true;
    this.pending = [];
    // Whoever waits on a settling commit still gets it (and is woken), now.
    if (this.settleTimer) this.start();
  }

  private wait(settles: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.schedule(settles);
    });
  }

  private schedule(settles: boolean): void {
    if (this.committing) return;
    if (settles && this.settleMs > 0) {
      this.settleTimer ??= setTimeout(() => this.start(), this.settleMs);
      return;
    }
    this.cancelSettle();
    this.committing = true;
    // A microtask later, so events emitted in the same burst share the commit.
    queueMicrotask(() => void this.drain());
  }

  private start(): void {
    this.cancelSettle();
    if (this.committing) return;
    this.committing = true;
    void this.drain();
  }

  private cancelSettle(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
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
