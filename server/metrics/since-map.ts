/**
 * When each of a bounded set of things began waiting: a cell queued for its
 * kernel, a kernel queued for GPUs. The first start counts (a queue position
 * that moves is the same wait); the oldest entries go first when the map is
 * full, so a cell whose end never came (its server lost its notebook) cannot
 * grow it without bound. Pure: the caller passes the clock.
 */
export class SinceMap<K> {
  private readonly since = new Map<K, number>();

  constructor(private readonly capacity = 10_000) {}

  /** `key` waits from `at`, unless it already waits. */
  start(key: K, at: number): void {
    if (this.since.has(key)) return;
    if (this.since.size >= this.capacity) {
      const oldest = this.since.keys().next();
      if (!oldest.done) this.since.delete(oldest.value);
    }
    this.since.set(key, at);
  }

  /** The wait ends: how long it lasted in seconds, or null when its start was not seen (a cell taken over from a previous server). */
  stop(key: K, at: number): number | null {
    const began = this.since.get(key);
    if (began === undefined) return null;
    this.since.delete(key);
    return Math.max(0, at - began) / 1000;
  }

  /** When `key` began waiting; undefined when it does not wait. */
  startedAt(key: K): number | undefined {
    return this.since.get(key);
  }

  /** Forgets every key `keep` says no longer waits. */
  retain(keep: (key: K) => boolean): void {
    for (const key of [...this.since.keys()]) if (!keep(key)) this.since.delete(key);
  }

  get size(): number {
    return this.since.size;
  }
}
