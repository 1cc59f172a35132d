/** The static chart's loss panel: the app's loss lines (downsampled, min/max per bucket), gaps where loss was non-finite. */
import type { LossLine } from "../chart-loss";
import { sampleLoss } from "../chart-loss";
import { markerIndices, markerPath } from "../chart-line-style";
import { linearScale, xAxis, yAxis } from "./static-axes";
import { el, px, type Box } from "./svg";

/** Points per line: plenty for a 650 px wide plot, small enough for a notebook file. */
const BUDGET = 600;

export function lossPlot(lines: readonly LossLine[], box: Box): string {
  const sampled = sampleLoss(lines, null, BUDGET);
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const { data } of sampled.lines) {
    for (const p of data) {
      x0 = Math.min(x0, p.x);
      x1 = Math.max(x1, p.x);
      if (p.y !== null) {
        y0 = Math.min(y0, p.y);
        y1 = Math.max(y1, p.y);
      }
    }
  }
  if (!Number.isFinite(x0)) return "";
  if (!Number.isFinite(y0)) {
    y0 = 0;
    y1 = 1;
  }
  const x = linearScale(x0, x1, box.x, box.x + box.width, 6, true);
  const y = linearScale(y0, y1, box.y + box.height, box.y, 5);
  const paths = sampled.lines.map(({ line, data }) => {
    let d = "";
    let pen = false;
    for (const p of data) {
      if (p.y === null) {
        pen = false;
        continue;
      }
      d += `${pen ? "L" : "M"}${px(x(p.x))} ${px(y(p.y))}`;
      pen = true;
    }
    return el("path", {
      d,
      fill: "none",
      stroke: line.color,
      "stroke-width": line.faded ? 1 : 1.5,
      "stroke-opacity": line.faded ? 0.55 : undefined,
      "stroke-dasharray": line.dash ?? undefined,
    });
  });
  // Markers above every line, shifted per line: a line lying on another stays visible (as in the app).
  const markers = sampled.lines.map(({ line, data }) => {
    let d = "";
    for (const i of markerIndices(data.length, line.index, lines.length)) {
      const p = data[i]!;
      if (p.y !== null) d += markerPath(line.marker, x(p.x), y(p.y));
    }
    return d === "" ? "" : el("path", { d, fill: "none", stroke: line.color, "stroke-width": 1.2 });
  });
  return [yAxis(box, y, "loss"), xAxis(box, x, "step"), el("g", { class: "lines" }, paths), el("g", { class: "markers" }, markers)].join("");
}
