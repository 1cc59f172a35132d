"use client";
/** Wires a MetricSync to the component's props: one per store, re-listening when the feed object changes. */
import { useEffect, useState } from "react";
import { fetchExecutionMetrics } from "./model/chart-fetch";
import { MetricSync } from "./model/chart-sync";
import type { MetricFeed, MetricStore } from "../../server/core/charts/metric-store";

export function useMetricSync(store: MetricStore, feed: MetricFeed, executionId: string | null, running: boolean): MetricSync | null {
  const [sync, setSync] = useState<MetricSync | null>(null);
  useEffect(() => {
    const created = new MetricSync(store, (id) => fetchExecutionMetrics(id));
    setSync(created);
    return () => created.dispose();
  }, [store]);
  useEffect(() => (sync ? sync.listen(feed) : undefined), [sync, feed]);
  useEffect(() => {
    if (sync) void sync.show(executionId, running);
  }, [sync, executionId, running]);
  return sync;
}
