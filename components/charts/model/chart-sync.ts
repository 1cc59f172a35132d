/**
 * Keeps a MetricStore filled for the execution a cell shows: fetches its
 * stored metrics when the execution changes, and again when its run ends
 * (points the live feed missed are then in the database); appends live
 * points of that execution meanwhile. Both paths go through the store, which
 * counts a (tag, rank, step, name) once, so the order they arrive in does not
 * matter. Compared runs are fetched once each.
 */
import type { ExecutionMetrics } from "../../../server/core/protocol/metrics-model";
import type { FetchResult } from "./chart-fetch";
import type { MetricFeed, MetricStore } from "../../../server/core/charts/metric-store";

export type FetchMetrics = (executionId: string) => Promise<FetchResult<ExecutionMetrics>>;

export class MetricSync {
  private executionId: string | null = null;
  private running = false;
  private compared: readonly string[] = [];
  private disposed = false;

  constructor(
    private readonly store: MetricStore,
    private readonly fetchMetrics: FetchMetrics,
  ) {}

  /** Appends the feed's points of the execution shown until the returned function is called. */
  listen(feed: MetricFeed): () => void {
    const stopPoints = feed.subscribe((executionId, points) => {
      if (!this.disposed && executionId === this.executionId) this.store.append(executionId, points);
    });
    const stopResync = feed.subscribeResync?.(() => void this.resync());
    const stopPlans = feed.subscribePlans?.((executionId, tag, plan) => {
      if (!this.disposed && executionId === this.executionId) this.store.setPlan(executionId, tag, plan);
    });
    return () => {
      stopPoints();
      stopResync?.();
      stopPlans?.();
    };
  }

  /** Points the feed missed (a reconnect served from a snapshot) are in the database: load the shown run again. */
  async resync(): Promise<void> {
    if (this.executionId !== null) await this.load(this.executionId);
  }

  /** The execution the cell shows and whether it is running; resolves when any fetch this started has landed. */
  async show(executionId: string | null, running: boolean): Promise<void> {
    const changed = executionId !== this.executionId;
    const ended = !changed && this.running && !running;
    this.executionId = executionId;
    this.running = running;
    if (changed) this.retain();
    if (executionId !== null && (changed || ended)) await this.load(executionId);
  }

  /** Overlays these runs: fetches those not held yet; returns an error text per run that failed. */
  async compare(executionIds: readonly string[]): Promise<Map<string, string>> {
    this.compared = [...executionIds];
    this.retain();
    const errors = new Map<string, string>();
    await Promise.all(
      executionIds
        .filter((id) => !this.store.run(id)?.summary)
        .map(async (id) => {
          const error = await this.load(id);
          if (error !== null) errors.set(id, error);
        }),
    );
    return errors;
  }

  /** Stops loading: answers still in flight are dropped. */
  dispose(): void {
    this.disposed = true;
  }

  private async load(executionId: string): Promise<string | null> {
    const result = await this.fetchMetrics(executionId);
    // An answer for a run no longer shown (re-run, unticked, unmounted) is dropped.
    if (this.disposed || !this.wanted(executionId)) return null;
    if (result.ok) {
      this.store.load(result.data);
      return null;
    }
    return result.error;
  }

  private wanted(executionId: string): boolean {
    return executionId === this.executionId || this.compared.includes(executionId);
  }

  private retain(): void {
    const keep = new Set(this.compared);
    if (this.executionId !== null) keep.add(this.executionId);
    this.store.retain(keep);
  }
}
