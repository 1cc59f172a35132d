/**
 * When a dropped link to a host agent is tried again: at growing pauses
 * (250 ms up to 10 s), one try scheduled at a time, back to the shortest
 * once a link opens. Separate from HostAgent: the timing of retries, not
 * what a retry does.
 */
export const RECONNECT_DELAYS_MS = [250, 1000, 2000, 5000, 10_000] as const;

export class ReconnectBackoff {
  private timer: NodeJS.Timeout | null = null;
  private attempt = 0;

  constructor(private readonly delays: readonly number[] = RECONNECT_DELAYS_MS) {}

  /** How long the next try waits. */
  get nextDelayMs(): number {
    return this.delays[Math.min(this.attempt, this.delays.length - 1)] ?? 0;
  }

  /** Schedules `retry` after the next pause, unless a try is scheduled already. */
  schedule(retry: () => void): void {
    if (this.timer) return;
    const delay = this.nextDelayMs;
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      retry();
    }, delay);
    this.timer.unref();
  }

  /** A link opened: the next drop is tried again soon. */
  reset(): void {
    this.attempt = 0;
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
