/**
 * Database writes of one notebook, one at a time and in order, off the
 * kernel's hot path. A failed write is reported and does not stop the ones
 * after it.
 */
export class WriteQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (error: unknown, what: string) => void) {}

  /** Runs `write` after every write queued before it; resolves or rejects with it. */
  run<T>(what: string, write: () => Promise<T>): Promise<T> {
    const result = this.tail.then(write);
    this.tail = result.then(
      () => undefined,
      (error: unknown) => this.onError(error, what),
    );
    return result;
  }

  /** Queues a write nobody waits for; its failure is only reported. */
  fire(what: string, write: () => Promise<unknown>): void {
    this.run(what, write).catch(() => undefined);
  }

  /** Resolves when everything queued so far has been written (or has failed). */
  drain(): Promise<void> {
    return this.tail;
  }
}
