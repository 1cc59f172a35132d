/**
 * Axis domains that stay put while a run streams: the data's extent widened
 * to round tick values. A live point inside the current domain then changes
 * only the lines, not the axes, so recharts does not rebuild its axes and
 * ticks on every frame; the domain moves only when data crosses a tick.
 */
import { niceTicks } from "../../../server/core/charts/chart-svg";

export type Domain = readonly [number, number];

export function stableDomain(min: number, max: number, tickCount = 5): Domain {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max <= min) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    return [min - pad, max + pad];
  }
  const ticks = niceTicks(min, max, tickCount);
  if (ticks.length < 2) return [min, max];
  const step = ticks[1]! - ticks[0]!;
  const lo = ticks[0]! > min ? ticks[0]! - step : ticks[0]!;
  const hi = ticks.at(-1)! < max ? ticks.at(-1)! + step : ticks.at(-1)!;
  return [Number(lo.toPrecision(12)), Number(hi.toPrecision(12))];
}

/** Min and max of the drawn points' x and (finite) y, or null when there are none. */
export function extent(lines: ReadonlyArray<{ data: ReadonlyArray<{ x: number; y: number | null }> }>): { x: Domain; y: Domain } | null {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const { data } of lines) {
    for (const p of data) {
      if (p.x < x0) x0 = p.x;
      if (p.x > x1) x1 = p.x;
      if (p.y === null) continue;
      if (p.y < y0) y0 = p.y;
      if (p.y > y1) y1 = p.y;
    }
  }
  if (!Number.isFinite(x0)) return null;
  return { x: [x0, x1], y: Number.isFinite(y0) ? [y0, y1] : [0, 1] };
}
