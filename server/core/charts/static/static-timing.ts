/** The static chart's timing panel: per-device stacked step-time bars (ms), variants side by side. */
import { escapeXml } from "../chart-svg";
import { PHASES, type TimingChart } from "../chart-timing";
import { linearScale, yAxis } from "./static-axes";
import { el, text, type Box } from "./svg";

export function timingPlot(chart: TimingChart, box: Box): string {
  const max = Math.max(0, ...chart.bars.map((b) => b.total));
  const y = linearScale(0, max > 0 ? max : 1, box.y + box.height, box.y, 5);
  const band = box.width / Math.max(1, chart.bars.length);
  const barWidth = Math.min(48, band * 0.7);
  const slanted = chart.bars.length > 6;
  const bottom = box.y + box.height;
  const bars = chart.bars.map((bar, i) => {
    const cx = box.x + band * (i + 0.5);
    let base = 0;
    const rects = PHASES.filter((p) => bar.ms[p.key] > 0).map((p) => {
      const top = base + bar.ms[p.key];
      const r = el("rect", { x: cx - barWidth / 2, y: y(top), width: barWidth, height: y(base) - y(top), fill: p.color });
      base = top;
      return r;
    });
    const label = slanted
      ? text(cx, bottom + 12, bar.label, { "text-anchor": "end", transform: `rotate(-35 ${cx} ${bottom + 12})`, fill: "#666666" })
      : text(cx, bottom + 14, bar.label, { "text-anchor": "middle", fill: "#666666" });
    return el("g", { class: "bar" }, [el("title", {}, escapeXml(`${bar.label}: ${bar.total.toFixed(3)} ms per step`)), ...rects, label]);
  });
  const axis = el("line", { x1: box.x, y1: bottom, x2: box.x + box.width, y2: bottom, stroke: "#999999" });
  return [yAxis(box, y, "ms"), axis, ...bars].join("");
}
