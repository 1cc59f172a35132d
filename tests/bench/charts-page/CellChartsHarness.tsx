/**
 * `/bench/charts?scenario=cell&executionId=…&running=1&templateId=…`: the
 * real CellCharts against whatever answers the metrics endpoints, with a
 * feed the browser drives through `window.__chartFeed.push(executionId,
 * points)` — for checking fetch + live + dedupe + compare in a browser
 * without a kernel — and `window.__chartFeed.plan(executionId, tag, plan)`,
 * the device plan a variant ran on as the kernel would report it.
 * `&cellName=…` is what the cell is called (names its untagged run).
 */
import { useMemo, useState } from "react";
import CellCharts from "../../../components/charts/CellCharts";
import type { MetricFeed } from "../../../server/core/charts/metric-store";
import type { DevicePlan } from "../../../server/core/protocol/kernel-messages";
import type { MetricPointMessage } from "../../../server/core/protocol/metrics-model";

type Listener = (executionId: string, points: MetricPointMessage[]) => void;
type PlanListener = (executionId: string, tag: string, plan: DevicePlan) => void;

declare global {
  interface Window {
    __chartFeed?: {
      push(executionId: string, points: MetricPointMessage[]): void;
      plan(executionId: string, tag: string, plan: DevicePlan): void;
      setRunning(running: boolean): void;
    };
  }
}

export default function CellChartsHarness({ params }: { params: URLSearchParams }) {
  const [running, setRunning] = useState(params.get("running") === "1");
  const feed = useMemo<MetricFeed>(() => {
    const listeners = new Set<Listener>();
    const planListeners = new Set<PlanListener>();
    window.__chartFeed = {
      push: (executionId, points) => listeners.forEach((l) => l(executionId, points)),
      plan: (executionId, tag, plan) => planListeners.forEach((l) => l(executionId, tag, plan)),
      setRunning,
    };
    return {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      subscribePlans(listener) {
        planListeners.add(listener);
        return () => planListeners.delete(listener);
      },
    };
  }, []);
  return (
    <CellCharts executionId={params.get("executionId")} running={running} feed={feed} templateId={params.get("templateId")} cellName={params.get("cellName")} />
  );
}
