/**
 * The charts of one execution as a self-contained SVG, for the .ipynb export
 * (JupyterLab shows image/svg+xml outputs): loss per variant and per-device
 * stacked step-time bars, each with a title, axes and legend, computed by
 * the same models as the app's charts.
 *
 * Hand-written rather than recharts rendered with react-dom/server: recharts
 * 3 draws its axes and series from effects after mount, so
 * renderToStaticMarkup returns only an empty wrapper <div>.
 */
import type { ExecutionMetrics } from "../../protocol/metrics-model";
import { deviceNotice } from "../chart-panel";
import { lossLines } from "../chart-loss";
import { RunIndex } from "../chart-run-index";
import { timingChart, type TimingChart } from "../chart-timing";
import { MetricStore } from "../metric-store";
import type { LossLine } from "../chart-loss";
import { lossPlot } from "./static-loss";
import { timingPlot } from "./static-timing";
import { el, FONT, legend, text, type StaticLegendEntry } from "./svg";

const WIDTH = 720;
const PLOT = { left: 64, right: 16, height: 180 };
const TITLE_H = 22;
const GAP = 18;

/** Null when the execution logged no series. */
export function renderExecutionChartsSvg(metrics: ExecutionMetrics): string | null {
  if (metrics.series.every((s) => s.steps.length === 0)) return null;
  const store = new MetricStore();
  store.load(metrics);
  const id = metrics.execution.executionId;
  const lines = lossLines(store, id, []);
  const timing = timingChart(new RunIndex(store.run(id)));

  const parts: string[] = [];
  let y = 0;
  const notice = deviceNotice(metrics.execution.deviceMode, metrics.execution.devicePlans);
  if (notice) {
    for (const line of [notice.text, ...notice.variants.map((variant) => (variant.tag === "" ? variant.label : `${variant.tag}: ${variant.label}`))]) {
      parts.push(text(8, y + 16, line, { fill: notice.emulated ? "#8a5a00" : "#444444" }));
      y += 20;
    }
    y += 4;
  }
  if (lines.length > 0) y = section(parts, y, "Loss vs step", (box) => lossPlot(lines, box), 36, lossLegend(lines));
  if (timing.bars.length > 0) {
    const bottom = timing.bars.length > 6 ? 70 : 24;
    y = section(parts, y, "Step time per device (ms) — median per phase, warm-up step excluded", (box) => timingPlot(timing, box), bottom, timingLegend(timing));
  }
  if (parts.length === 0) return null;
  const height = Math.ceil(y + 8);
  return el(
    "svg",
    { xmlns: "http://www.w3.org/2000/svg", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "font-family": FONT, "font-size": 11 },
    [el("title", {}, "Metrics of this cell's run"), el("rect", { x: 0, y: 0, width: WIDTH, height, fill: "#ffffff" }), ...parts],
  );
}

/** Appends one titled panel with its legend below; returns the y where the next one starts. */
function section(parts: string[], top: number, title: string, plot: (box: { x: number; y: number; width: number; height: number }) => string, axisRoom: number, entries: StaticLegendEntry[]): number {
  parts.push(text(8, top + 15, title, { "font-weight": "bold", "font-size": 13, fill: "#222222" }));
  const box = { x: PLOT.left, y: top + TITLE_H + 6, width: WIDTH - PLOT.left - PLOT.right, height: PLOT.height };
  parts.push(el("g", { class: "plot" }, plot(box)));
  const key = legend(entries, PLOT.left, box.y + box.height + axisRoom, WIDTH - PLOT.left - PLOT.right);
  parts.push(key.svg);
  return box.y + box.height + axisRoom + key.height + GAP;
}

function lossLegend(lines: readonly LossLine[]): StaticLegendEntry[] {
  return lines.map((l) => ({ label: l.label, color: l.color, dashed: l.dashed, faded: l.faded, dash: l.dash }));
}

function timingLegend(chart: TimingChart): StaticLegendEntry[] {
  return chart.phases.map((p) => ({ label: p.label, color: p.color }));
}
