/**
 * Database writes of one notebook, one at a time and in order, off the
 * kernel's hot path. A failed write is reported and does not stop the ones
 * after it.
 *
 * A write that fails because the database cannot be reached (a PostgreSQL
 * restart, a failover) is tried again, with growing pauses, until it goes
 * through or `retry.limitMs` has passed: the writes behind it wait, in
 * order, so an outage of seconds delays what viewers see (durable before
 * visible) instead of losing what they saw. A write is told which attempt
 * it is: a connection that drops during a COMMIT leaves it unknown whether
 * the transaction went through, so a write that is not idempotent checks
 * on a later attempt whether its first one was stored (RunRepository.write,
 * a notebook edit with its id: NotebookRepository).
 */
export interface WriteRetry {
  /** The failures worth waiting out (the database unreachable), not the write's own errors. */
  when: (error: unknown) => boolean;
  /** How long one write is retried before it fails as any other. */
  limitMs: number;
  /** Told once per write that has to wait: the first failure. */
  onRetry?: (error: unknown, what: string) => void;
}

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

export class WriteQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly onError: (error: unknown, what: string) => void,
    private readonly retry: WriteRetry | null = null,
  ) {}

  /** Runs `write` after every write queued before it; resolves or rejects with it. */
  run<T>(what: string, write: (attempt: number) => Promise<T>): Promise<T> {
    const result = this.tail.then(() => this.attempt(what, write));
    this.tail = result.then(
      () => undefined,
      (error: unknown) => this.onError(error, what),
    );
    return result;
  }

  /** Queues a write nobody waits for; its failure is only reported. */
  fire(what: string, write: (attempt: number) => Promise<unknown>): void {
    this.run(what, write).catch(() => undefined);
  }

  /** Resolves when everything queued so far has been written (or has failed). */
  drain(): Promise<void> {
    return this.tail;
  }

  private async attempt<T>(what: string, write: (attempt: number) => Promise<T>): Promise<T> {
    const retry = this.retry;
    if (retry === null) return write(0);
    const deadline = Date.now() + retry.limitMs;
    for (let pause = FIRST_PAUSE_MS, tries = 0; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS), tries += 1) {
      try {
        return await write(tries);
      } catch (error) {
        if (!retry.when(error) || Date.now() + pause > deadline) throw error;
        if (tries === 0) retry.onRetry?.(error, what);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}
