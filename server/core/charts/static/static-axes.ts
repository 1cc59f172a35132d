/** Axes for the static chart: linear scales over nice ticks, grid lines, tick labels and axis titles. */
import { integerTicks, niceTicks, tickText } from "../chart-svg";
import { el, text, type Box } from "./svg";

export interface Scale {
  (value: number): number;
  ticks: number[];
}

/** A linear scale of [min, max] onto [from, to], its domain widened to round ticks (whole numbers only when `integer`: steps). */
export function linearScale(min: number, max: number, from: number, to: number, tickCount = 5, integer = false): Scale {
  let lo = min;
  let hi = max;
  if (!(hi > lo)) {
    const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  if (integer) {
    lo = Math.floor(lo);
    hi = Math.max(lo + 1, Math.ceil(hi));
  }
  const ticks = integer ? integerTicks(lo, hi, tickCount) : niceTicks(lo, hi, tickCount);
  if (ticks.length >= 2) {
    // Extend to the round ticks just outside the data, so the axis ends on a labelled value.
    const step = ticks[1]! - ticks[0]!;
    if (ticks[0]! > lo) ticks.unshift(Number((ticks[0]! - step).toPrecision(12)));
    if (ticks.at(-1)! < hi) ticks.push(Number((ticks.at(-1)! + step).toPrecision(12)));
    lo = ticks[0]!;
    hi = ticks.at(-1)!;
  }
  const scale = ((value: number) => from + ((value - lo) / (hi - lo)) * (to - from)) as Scale;
  scale.ticks = ticks;
  return scale;
}

/** Horizontal grid and y tick labels, and the y axis title. */
export function yAxis(box: Box, y: Scale, title: string): string {
  const parts = y.ticks.map((t) =>
    [
      el("line", { x1: box.x, y1: y(t), x2: box.x + box.width, y2: y(t), stroke: "#e6e6e6", "stroke-dasharray": "3 3" }),
      text(box.x - 6, y(t) + 4, tickText(t), { "text-anchor": "end", fill: "#666666" }),
    ].join(""),
  );
  const cy = box.y + box.height / 2;
  parts.push(text(box.x - 46, cy, title, { transform: `rotate(-90 ${box.x - 46} ${cy})`, "text-anchor": "middle", fill: "#444444" }));
  parts.push(el("line", { x1: box.x, y1: box.y, x2: box.x, y2: box.y + box.height, stroke: "#999999" }));
  return parts.join("");
}

/** Bottom axis line, numeric tick labels and the x axis title. */
export function xAxis(box: Box, x: Scale, title: string): string {
  const bottom = box.y + box.height;
  const parts = x.ticks.map((t) => text(x(t), bottom + 14, tickText(t), { "text-anchor": "middle", fill: "#666666" }));
  parts.push(el("line", { x1: box.x, y1: bottom, x2: box.x + box.width, y2: bottom, stroke: "#999999" }));
  parts.push(text(box.x + box.width / 2, bottom + 30, title, { "text-anchor": "middle", fill: "#444444" }));
  return parts.join("");
}
