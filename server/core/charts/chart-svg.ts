/** Small helpers for SVG text written by hand (the .ipynb export, the PNG export's title and legend). */

/** Escapes text for an XML element or attribute. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/** About `count` round tick values (1, 2 or 5 × 10^k apart) covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) return [min];
  const raw = (max - min) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/**
 * Integer-only ticks (steps, device counts): round values as niceTicks
 * picks them, but never closer than 1 apart, so an axis of 3 steps reads
 * 0, 1, 2, 3 and never 0.75 or 1.5.
 */
export function integerTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  // "+ 0" turns -0 (ceil of a tiny negative) into 0.
  const lo = Math.ceil(Math.min(min, max) - 1e-9) + 0;
  const hi = Math.floor(Math.max(min, max) + 1e-9);
  if (hi < lo) return [];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude);
  const ticks: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) ticks.push(t);
  return ticks;
}

/** Tick text: integers as such, others to 3 significant digits. */
export function tickText(value: number): string {
  if (Number.isInteger(value)) return Math.abs(value) >= 10_000 ? value.toLocaleString("en-US") : String(value);
  return Number(value.toPrecision(3)).toString();
}
