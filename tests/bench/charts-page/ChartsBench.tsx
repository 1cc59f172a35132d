/**
 * /bench/charts: renders synthetic runs with the app's own ChartPanel and
 * times them. `?scenario=first-render|live&budget=N|all`; results land in
 * `window.__chartBench` and in the page, for tests/bench/charts.ts to read.
 * `?scenario=cell` mounts the real CellCharts instead (see CellChartsHarness).
 */
import "../../../components/shell/browser-setup";
import { useEffect, useState } from "react";
import ChartPanel from "../../../components/charts/ChartPanel";
import { DEFAULT_BUDGET } from "../../../server/core/charts/chart-loss";
import { useFrameVersion } from "../../../components/charts/use-frame-version";
import CellChartsHarness from "./CellChartsHarness";
import { firstRender, liveUpdates, type PanelState, type ScenarioResult } from "./bench-scenarios";

import "./ChartsBench.css";

declare global {
  interface Window {
    __chartBench?: { done: boolean; result?: ScenarioResult; error?: string };
  }
}

const NONE: readonly string[] = [];

function Panel({ panel }: { panel: PanelState }) {
  const version = useFrameVersion(panel.frames);
  return <ChartPanel store={panel.store} version={version} primaryId={panel.executionId} compared={NONE} budget={panel.budget} />;
}

export default function ChartsBench() {
  const [panel, setPanel] = useState<PanelState | null>(null);
  const [report, setReport] = useState("running…");
  const [harness, setHarness] = useState<URLSearchParams | null>(null);

  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    if (params.get("scenario") === "cell") {
      setHarness(params);
      return;
    }
    const budgetParam = params.get("budget");
    const budget = budgetParam === "all" ? null : Number(budgetParam ?? DEFAULT_BUDGET);
    const run = params.get("scenario") === "live" ? liveUpdates(setPanel, budget) : firstRender(setPanel, budget);
    window.__chartBench = { done: false };
    run.then(
      (result) => {
        window.__chartBench = { done: true, result };
        setReport(JSON.stringify(result, null, 2));
      },
      (err: unknown) => {
        window.__chartBench = { done: true, error: String(err) };
        setReport(String(err));
      },
    );
  }, []);

  if (harness) {
    return (
      <main className="chart-bench">
        <CellChartsHarness params={harness} />
      </main>
    );
  }
  return (
    <main className="chart-bench">
      <h1>Chart benchmark</h1>
      <pre data-testid="bench-results">{report}</pre>
      {panel ? <Panel panel={panel} /> : null}
    </main>
  );
}
