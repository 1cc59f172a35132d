/**
 * Live metric points and device plans of the notebook's cells, handed to
 * their charts outside the document: thousands of points a second must never
 * re-render cells, so they bypass the view store and go to whoever
 * subscribed for that cell.
 */
import type { DevicePlan } from "../../../server/core/protocol/kernel-messages";
import type { MetricPointMessage } from "../../../server/core/protocol/metrics-model";
import type { NotebookEvent } from "../../../server/core/protocol/socket-api";

type PointListener = (executionId: string, points: MetricPointMessage[]) => void;
type PlanListener = (executionId: string, tag: string, plan: DevicePlan) => void;

/** Live metric points of one cell, for its charts. */
export interface CellMetricFeed {
  subscribe(listener: PointListener): () => void;
  /** A reconnect served a snapshot: live points sent meanwhile never arrive, so charts reload. */
  subscribeResync(listener: () => void): () => void;
  /** The devices each variant of the cell's run ran on, as the kernel reports them. */
  subscribePlans(listener: PlanListener): () => void;
}

export class CellMetricFeeds {
  private readonly points = new Map<string, Set<PointListener>>();
  private readonly plans = new Map<string, Set<PlanListener>>();
  private readonly resyncs = new Set<() => void>();
  private readonly feeds = new Map<string, CellMetricFeed>();

  /** The same object per cell, so components can depend on it. */
  feed(cellId: string): CellMetricFeed {
    let feed = this.feeds.get(cellId);
    if (feed === undefined) {
      feed = {
        subscribe: (listener) => subscribeTo(this.points, cellId, listener),
        subscribeResync: (listener) => {
          this.resyncs.add(listener);
          return () => this.resyncs.delete(listener);
        },
        subscribePlans: (listener) => subscribeTo(this.plans, cellId, listener),
      };
      this.feeds.set(cellId, feed);
    }
    return feed;
  }

  /** Hands a metric event to its cell's listeners; false: the event is not one of ours (it belongs to the document). */
  deliver(event: NotebookEvent): boolean {
    if (event.type === "cell-metric-points") {
      for (const listener of this.points.get(event.cellId) ?? []) listener(event.executionId, event.points);
      return true;
    }
    if (event.type === "cell-device-plan") {
      for (const listener of this.plans.get(event.cellId) ?? []) listener(event.executionId, event.tag, event.plan);
      return true;
    }
    return false;
  }

  /** A fresh snapshot replaced the journal: every chart reloads what it shows. */
  resynced(): void {
    for (const listener of [...this.resyncs]) listener();
  }
}

function subscribeTo<L>(byCell: Map<string, Set<L>>, cellId: string, listener: L): () => void {
  let listeners = byCell.get(cellId);
  if (listeners === undefined) byCell.set(cellId, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners.delete(listener);
}
