/**
 * The statistics the bar charts share, with the warm-up rule in one place:
 * the first step (compilation, allocator and loader start-up) is left out
 * when the series has more than 2 steps.
 *
 * One statistic per number: a bar is the **median** of its steps, drawn with
 * its range (fastest to slowest step), and the verdicts that speak of the
 * same quantity read the same median (kernels/mgpulab_scenarios/stats.py).
 * A mean let one outlier step (980 ms among 3.4 ms ones) draw a bar 70 times
 * the typical step and tell the opposite story to a verdict's median.
 */
import type { SeriesBuffer } from "./chart-series-buffer";

export const WARMUP_RULE = "each bar is the median over steps, leaving out the first (warm-up) step when a series has more than 2";
/** What a bar's height is, for notes and exports. */
export const BAR_STATISTIC = "median";

/** Whether the first point is left out of means. */
export function skipsWarmup(series: SeriesBuffer): boolean {
  return series.length > 2;
}

/** The number of finite values a bar of this series uses (warm-up excluded). */
export function meanCount(series: SeriesBuffer): number {
  return skipsWarmup(series) ? series.tailCount : series.count;
}

/** The charts' value of a series: the median over steps (warm-up excluded), or null when no finite value remains. */
export function stepMedian(series: SeriesBuffer | undefined): number | null {
  return stepSpread(series)?.median ?? null;
}

/** The mean over steps (warm-up excluded), or null when no finite value remains (utilisation over time; never a bar of a verdict's number). */
export function stepMean(series: SeriesBuffer | undefined): number | null {
  if (!series) return null;
  const skip = skipsWarmup(series);
  const count = skip ? series.tailCount : series.count;
  return count > 0 ? (skip ? series.tailSum : series.sum) / count : null;
}

/** The largest finite value (peaks include the warm-up step), or null. */
export function peak(series: SeriesBuffer | undefined): number | null {
  return series && series.count > 0 ? series.max : null;
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
  /** Finite values the spread is over (the same ones stepMean uses). */
  count: number;
}

/**
 * Min, median and max over the same values as `stepMean` (the warm-up step
 * left out by the same rule): timing on a shared host moves by ±20 % between
 * steps, and a mean alone hides that.
 */
export function stepSpread(series: SeriesBuffer | undefined): Spread | null {
  if (!series) return null;
  const values: number[] = [];
  for (let i = skipsWarmup(series) ? 1 : 0; i < series.length; i++) {
    const v = series.values[i]!;
    if (!Number.isNaN(v)) values.push(v);
  }
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  return { min: values[0]!, median: median(values), max: values[values.length - 1]!, count: values.length };
}
