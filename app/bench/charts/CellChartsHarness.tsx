"use client";
/**
 * `/bench/charts?scenario=cell&executionId=…&running=1&templateId=…`: the
 * real CellCharts against whatever answers the metrics endpoints, with a
 * feed the browser drives through `window.__chartFeed.push(executionId,
 * points)` — for checking fetch + live + dedupe + compare in a browser
 * without a kernel.
 */
import { useMemo, useState } from "react";
import CellCharts from "../../../components/CellCharts";
import type { MetricFeed } from "../../../server/core/charts/metric-store";
import type { MetricPointMessage } from "../../../server/core/protocol/metrics-model";

type Listener = (executionId: string, points: MetricPointMessage[]) => void;

declare global {
  interface Window {
    __chartFeed?: { push(executionId: string, points: MetricPointMessage[]): void; setRunning(running: boolean): void };
  }
}

export default function CellChartsHarness({ params }: { params: URLSearchParams }) {
  const [running, setRunning] = useState(params.get("running") === "1");
  const feed = useMemo<MetricFeed>(() => {
    const listeners = new Set<Listener>();
    window.__chartFeed = {
      push: (executionId, points) => listeners.forEach((l) => l(executionId, points)),
      setRunning,
    };
    return {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
  }, []);
  return <CellCharts executionId={params.get("executionId")} running={running} feed={feed} templateId={params.get("templateId")} />;
}
