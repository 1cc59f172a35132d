/**
 * The compact live-metrics view of a cell: which columns to show and how
 * each number reads, decided here so the component only lays out strings.
 * One row per rank/device; the known per-phase columns in a fixed order, then
 * up to a few other metrics the run logged, by name.
 */
import { byteUnitForMiB } from "../../../server/core/charts/chart-units";
import type { LiveMetrics } from "../../../server/core/protocol/notebook-model";

/** Known metrics, in display order, with their headers. */
const KNOWN_COLUMNS: ReadonlyArray<{ key: string; label: string }> = [
  { key: "loss", label: "loss" },
  { key: "data_ms", label: "data ms" },
  { key: "forward_ms", label: "forward ms" },
  { key: "backward_ms", label: "backward ms" },
  { key: "comm_ms", label: "comm ms" },
  { key: "optimizer_ms", label: "optimizer ms" },
  { key: "step_ms", label: "step ms" },
  { key: "samples", label: "samples" },
  { key: "memory_mib", label: "memory MiB" },
];

const MAX_EXTRA_COLUMNS = 4;

export interface MetricsColumn {
  key: string;
  label: string;
}

export interface MetricsRow {
  rank: number;
  label: string;
  step: string;
  /** One string per column, `—` where the rank has no value. */
  cells: string[];
}

export interface MetricsTable {
  columns: MetricsColumn[];
  rows: MetricsRow[];
  caption: string;
}

export const MISSING = "—";

export function metricsTable(metrics: LiveMetrics): MetricsTable {
  const present = new Set<string>();
  for (const rank of metrics.ranks) for (const key of Object.keys(rank.values)) present.add(key);
  const known = KNOWN_COLUMNS.filter((c) => c.key === "loss" || present.has(c.key));
  const knownKeys = new Set(KNOWN_COLUMNS.map((c) => c.key));
  const extra = [...present]
    .filter((key) => !knownKeys.has(key))
    .sort()
    .slice(0, MAX_EXTRA_COLUMNS)
    .map((key) => ({ key, label: key }));
  // Memory is logged in MiB but shown in the unit its largest value reads in (0.0026 MiB is 2.7 KiB), as the charts do.
  const memory = byteUnitForMiB(metrics.ranks.map((r) => r.values.memory_mib ?? null));
  const columns = [...known, ...extra].map((c) => (c.key === "memory_mib" ? { ...c, label: `memory ${memory.unit}` } : c));
  const rows = [...metrics.ranks]
    .sort((a, b) => a.rank - b.rank)
    .map((r) => ({
      rank: r.rank,
      label: `rank ${r.rank}`,
      step: formatMetric("step", r.step),
      cells: columns.map((c) => {
        const value = r.values[c.key] ?? null;
        return c.key === "memory_mib" ? formatMemory(value === null ? null : value * memory.fromMiB) : formatMetric(c.key, value);
      }),
    }));
  const points = `${metrics.points.toLocaleString("en-US")} ${metrics.points === 1 ? "point" : "points"} received`;
  return { columns, rows, caption: points };
}

/** A memory value already in its column's unit: whole from 100, else 3 significant digits. */
function formatMemory(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return MISSING;
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString("en-US") : String(Number(value.toPrecision(3)));
}

/** How one metric value reads: times with sensible decimals, counts as integers, the rest to 4 significant digits. */
export function formatMetric(key: string, value: number | null): string {
  if (value === null || !Number.isFinite(value)) return MISSING;
  if (key === "step" || key === "samples" || key === "memory_mib") return Math.round(value).toLocaleString("en-US");
  if (key.endsWith("_ms")) {
    const abs = Math.abs(value);
    return value.toFixed(abs < 10 ? 2 : abs < 100 ? 1 : 0);
  }
  if (Math.abs(value) >= 10_000) return Math.round(value).toLocaleString("en-US");
  if (value === 0) return "0";
  if (Math.abs(value) < 1e-3) return value.toExponential(2);
  return value.toPrecision(4);
}
