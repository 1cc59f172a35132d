/**
 * The charts' data: every metric series of the executions on screen (this
 * cell's run and the runs it is compared with), in typed columns. Stored
 * metrics are `load`ed, live points `append`ed; a point that arrives both
 * ways is counted once — per series a step holds one value, so dedupe is by
 * (tag, rank, step, name). A version counter and `subscribe` make it a
 * `useSyncExternalStore` source.
 */
import type { DevicePlan } from "../protocol/kernel-messages";
import type { ExecutionMetrics, ExecutionSummary, MetricPointMessage, MetricSeriesKey } from "../protocol/metrics-model";
import { SeriesBuffer } from "./chart-series-buffer";

/** Delivers the live metric points of a cell, tagged with the execution that produced them. */
export interface MetricFeed {
  subscribe(listener: (executionId: string, points: MetricPointMessage[]) => void): () => void;
  /**
   * Called when the connection was re-established from a snapshot: live
   * points sent meanwhile are lost to the feed, so the charts refetch.
   */
  subscribeResync?(listener: () => void): () => void;
  /** The devices a variant of an execution ran on, as soon as the kernel says (before the run is stored). */
  subscribePlans?(listener: (executionId: string, tag: string, plan: DevicePlan) => void): () => void;
}

/** One execution as the charts read it. */
export interface RunView {
  executionId: string;
  /** Null until the stored metrics (which carry the summary) have been loaded. */
  summary: ExecutionSummary | null;
  /** What each variant (metric tag) ran on: from the stored summary and live as the kernel reports it. */
  plans: Readonly<Record<string, DevicePlan>>;
  /** In first-seen order. */
  series: readonly SeriesBuffer[];
}

interface RunData extends RunView {
  series: SeriesBuffer[];
  byKey: Map<string, SeriesBuffer>;
}

const seriesId = (tag: string, rank: number, name: string): string => `${tag}\u0000${rank}\u0000${name}`;

export class MetricStore {
  private readonly runs = new Map<string, RunData>();
  private readonly listeners = new Set<() => void>();
  private version = 0;

  /** Bumped on every change that added a point or a summary. */
  readonly getVersion = (): number => this.version;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  run(executionId: string): RunView | undefined {
    return this.runs.get(executionId);
  }

  /** Merges stored metrics into what is held (live points already appended are not counted twice). */
  load(metrics: ExecutionMetrics): void {
    const run = this.ensure(metrics.execution.executionId);
    run.summary = metrics.execution;
    run.plans = { ...run.plans, ...metrics.execution.devicePlans };
    for (const s of metrics.series) this.series(run, s).addMany(s.steps, s.values);
    this.changed();
  }

  /** Adds live points; returns how many values were new. */
  append(executionId: string, points: readonly MetricPointMessage[]): number {
    const run = this.ensure(executionId);
    let added = 0;
    for (const point of points) {
      for (const name in point.values) {
        const value = point.values[name];
        if (value === undefined) continue;
        if (this.series(run, { tag: point.tag, rank: point.rank, name }).add(point.step, value)) added++;
      }
    }
    if (added > 0) this.changed();
    return added;
  }

  /** The devices the variant `tag` of an execution ran on (live, ahead of the stored summary). */
  setPlan(executionId: string, tag: string, plan: DevicePlan): void {
    const run = this.ensure(executionId);
    if (run.plans[tag]?.label === plan.label && run.plans[tag]?.memorySource === plan.memorySource) return;
    run.plans = { ...run.plans, [tag]: plan };
    this.changed();
  }

  /** Drops every execution not in `keep` (a cell re-run, a run unticked in the compare picker). */
  retain(keep: ReadonlySet<string>): void {
    let dropped = false;
    for (const id of [...this.runs.keys()]) {
      if (keep.has(id)) continue;
      this.runs.delete(id);
      dropped = true;
    }
    if (dropped) this.changed();
  }

  private ensure(executionId: string): RunData {
    let run = this.runs.get(executionId);
    if (!run) {
      run = { executionId, summary: null, plans: {}, series: [], byKey: new Map() };
      this.runs.set(executionId, run);
    }
    return run;
  }

  private series(run: RunData, key: MetricSeriesKey): SeriesBuffer {
    const id = seriesId(key.tag, key.rank, key.name);
    let buffer = run.byKey.get(id);
    if (!buffer) {
      buffer = new SeriesBuffer({ tag: key.tag, rank: key.rank, name: key.name });
      run.byKey.set(id, buffer);
      run.series.push(buffer);
    }
    return buffer;
  }

  private changed(): void {
    this.version += 1;
    for (const listener of [...this.listeners]) listener();
  }
}
