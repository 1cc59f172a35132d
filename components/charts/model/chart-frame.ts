/**
 * A store's version, republished at most once per animation frame: live
 * points can arrive hundreds of times a second, and re-rendering charts on
 * each would make typing in the editor lag. Subscribes to the source only
 * while someone listens.
 */
export interface VersionSource {
  subscribe(listener: () => void): () => void;
  getVersion(): number;
}

export interface FrameScheduler {
  request(callback: () => void): number;
  cancel(handle: number): void;
}

export const animationFrames: FrameScheduler = {
  request: (callback) => requestAnimationFrame(callback),
  cancel: (handle) => cancelAnimationFrame(handle),
};

export class FrameThrottledVersion implements VersionSource {
  private published: number;
  private pending: number | null = null;
  private readonly listeners = new Set<() => void>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly source: VersionSource,
    private readonly frames: FrameScheduler = animationFrames,
  ) {
    this.published = source.getVersion();
  }

  readonly getVersion = (): number => this.published;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (!this.unsubscribe) this.unsubscribe = this.source.subscribe(this.schedule);
    // A change between the first render and this subscription must not be lost.
    if (this.source.getVersion() !== this.published) this.schedule();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.unsubscribe?.();
      this.unsubscribe = null;
      if (this.pending !== null) this.frames.cancel(this.pending);
      this.pending = null;
    };
  };

  /** Publishes now instead of at the next frame (the benchmark times one update exactly). */
  flush(): void {
    if (this.pending !== null) this.frames.cancel(this.pending);
    this.pending = null;
    this.publish();
  }

  private readonly schedule = (): void => {
    if (this.pending !== null) return;
    this.pending = this.frames.request(() => {
      this.pending = null;
      this.publish();
    });
  };

  private publish(): void {
    const version = this.source.getVersion();
    if (version === this.published) return;
    this.published = version;
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * How long to wait before republishing a slow-clock version: at once when
 * the last publication is `intervalMs` old, else until it will be.
 */
export function trailingDelay(now: number, lastPublishedAt: number, intervalMs: number): number {
  return Math.max(0, lastPublishedAt + intervalMs - now);
}
