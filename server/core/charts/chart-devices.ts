/**
 * Per-device bars: samples per step and peak memory, one bar per rank
 * (device), grouped by variant. Samples are a median over steps (warm-up
 * excluded, the charts' statistic); memory is the largest value seen, `memory_peak_mib` when logged
 * and `memory_mib` otherwise (emulated devices track bytes, not peaks).
 */
import type { RunIndex } from "./chart-run-index";
import type { SeriesBuffer } from "./chart-series-buffer";
import { meanCount, peak, stepMean, stepMedian } from "./chart-stats";

export interface DeviceBarsRow {
  tag: string;
  label: string;
  /** Aligned with the chart's `ranks`; null where that rank logged nothing. */
  values: Array<number | null>;
}

export interface DeviceBarsChart {
  /** Column header of the value in CSV ("samples_per_step", "peak_mib"). */
  valueName: string;
  ranks: number[];
  rows: DeviceBarsRow[];
  points: number;
}

export function samplesChart(index: RunIndex): DeviceBarsChart | null {
  return deviceBars(index, "samples_per_step", index.variants, (tag, rank) => {
    const series = index.get(tag, rank, "samples");
    const value = stepMedian(series);
    return value === null || !series ? null : { value, points: meanCount(series) };
  });
}

/** Peak memory (MiB) of the variants `tags` (all by default). */
export function memoryChart(index: RunIndex, tags: readonly string[] = index.variants): DeviceBarsChart | null {
  return deviceBars(index, "peak_mib", tags, (tag, rank) => {
    const series: SeriesBuffer | undefined =
      (index.get(tag, rank, "memory_peak_mib")?.count ?? 0) > 0 ? index.get(tag, rank, "memory_peak_mib") : index.get(tag, rank, "memory_mib");
    const value = peak(series);
    return value === null || !series ? null : { value, points: series.count };
  });
}

/** GPU utilisation per GPU (NVML utilization.gpu, logged by the toolkit's GPU monitor with rank = CUDA device): the mean over the run. */
export function utilizationChart(index: RunIndex): DeviceBarsChart | null {
  return deviceBars(index, "gpu_util_pct_mean", index.variants, (tag, rank) => {
    const series = index.get(tag, rank, "gpu_util_pct");
    const value = stepMean(series);
    return value === null || !series ? null : { value, points: meanCount(series) };
  });
}

type Measure = (tag: string, rank: number) => { value: number; points: number } | null;

function deviceBars(index: RunIndex, valueName: string, tags: readonly string[], measure: Measure): DeviceBarsChart | null {
  const cells = new Map<string, Map<number, number>>();
  const ranks = new Set<number>();
  let points = 0;
  for (const tag of tags) {
    for (const rank of index.ranks(tag)) {
      const m = measure(tag, rank);
      if (!m) continue;
      if (!cells.has(tag)) cells.set(tag, new Map());
      cells.get(tag)!.set(rank, m.value);
      ranks.add(rank);
      points += m.points;
    }
  }
  if (cells.size === 0) return null;
  const sortedRanks = [...ranks].sort((a, b) => a - b);
  const rows = index.variants
    .filter((tag) => cells.has(tag))
    .map((tag) => ({ tag, label: index.label(tag), values: sortedRanks.map((r) => cells.get(tag)!.get(r) ?? null) }));
  return { valueName, ranks: sortedRanks, rows, points };
}
