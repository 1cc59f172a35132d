/**
 * CSV of exactly what a chart holds: a header row, one row per point or
 * bar, LF line ends. Numbers are written with `String(n)`, the shortest text
 * that parses back to the same double, so nothing is rounded; a missing value
 * is empty.
 */
import type { DeviceBarsChart } from "../../../server/core/charts/chart-devices";
import type { LossLine } from "../../../server/core/charts/chart-loss";
import type { SpeedupChart } from "../../../server/core/charts/chart-speedup";
import type { TimingChart } from "../../../server/core/charts/chart-timing";
import { windowRange, type XWindow } from "../../../server/core/charts/downsample";

export type CsvValue = string | number | null;

export function csvField(value: CsvValue): string {
  if (value === null) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  return /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replace(/"/g, '""')}"` : value;
}

export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvField).join(",")];
  for (const row of rows) lines.push(row.map(csvField).join(","));
  return lines.join("\n") + "\n";
}

/** Every real point of every line inside the window (not the downsampled ones). */
export function lossCsv(lines: readonly LossLine[], window: XWindow | null): string {
  function* rows(): Generator<CsvValue[]> {
    for (const line of lines) {
      const { lo, hi } = windowRange(line.series, window);
      for (let i = lo; i < hi; i++) yield [line.executionId, line.tag, line.rank, line.series.steps[i]!, line.series.valueAt(i)];
    }
  }
  return toCsv(["execution_id", "variant", "rank", "step", "value"], rows());
}

/** Means per phase, then the spread of the time per step over the same steps (`spread_metric` says which series). */
export function timingCsv(chart: TimingChart): string {
  const header = ["variant", "rank", ...chart.phases.map((p) => `${p.key}_ms`), "total_ms", "points", "spread_metric", "min_ms", "median_ms", "max_ms", "spread_steps"];
  return toCsv(
    header,
    chart.bars.map((b) => [
      b.tag,
      b.rank,
      ...chart.phases.map((p) => b.ms[p.key]),
      b.total,
      b.points,
      b.spreadMetric,
      b.spread?.min ?? null,
      b.spread?.median ?? null,
      b.spread?.max ?? null,
      b.spread?.count ?? null,
    ]),
  );
}

export function deviceBarsCsv(chart: DeviceBarsChart): string {
  const rows: CsvValue[][] = [];
  for (const row of chart.rows) {
    row.values.forEach((value, i) => {
      if (value !== null) rows.push([row.tag, chart.ranks[i]!, value]);
    });
  }
  return toCsv(["variant", "rank", chart.valueName], rows);
}

export function speedupCsv(chart: SpeedupChart): string {
  const unit = chart.basis === "sample" ? "ms_per_sample" : "ms_per_step";
  return toCsv(
    ["variant", "family", "devices", unit, "speedup", "speedup_low", "speedup_high", "ideal", "noise"],
    [chart.baseline, ...chart.points].map((p) => [p.tag, p.family, p.devices, p.timeMs, p.speedup, p.range?.low ?? null, p.range?.high ?? null, p.devices, p.noise]),
  );
}
