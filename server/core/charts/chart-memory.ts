/**
 * Memory charts that never mix quantities: a run's variants can measure
 * memory differently (process RSS for one device and DDP ranks, tracked
 * tensor bytes for emulated DataParallel, allocator peaks on CUDA), and bars
 * of different quantities on one axis lie (DataParallel looks free). So the
 * variants are grouped by the memory source their device plan names, one
 * chart per source, each titled with what it measures and scaled to its own
 * byte unit. A run without plans gets one chart, its note saying what the
 * values usually are.
 */
import type { DevicePlan } from "../protocol/kernel-messages";
import { memoryChart, type DeviceBarsChart } from "./chart-devices";
import type { RunIndex } from "./chart-run-index";
import { byteUnitForMiB, unitColumn, type UnitScale } from "./chart-units";

/** The note of a run without recorded plans. */
export const MEMORY_SOURCE_UNKNOWN =
  "Largest memory_peak_mib logged (memory_mib where no peak was logged). On CPU this is the process's RSS; emulated devices count their tensors' bytes.";

export interface MemoryChart {
  /** The plans' memory source of every variant in this chart; null for runs without plans. */
  source: string | null;
  title: string;
  note: string;
  scale: UnitScale;
  /** Values in `scale.unit`; `valueName` names that unit ("peak_kib"). */
  chart: DeviceBarsChart;
}

/** One chart per memory source, in the order the sources' first variants are drawn. */
export function memoryCharts(index: RunIndex, plans: Readonly<Record<string, DevicePlan>>): MemoryChart[] {
  const groups = new Map<string | null, string[]>();
  const planned = Object.keys(plans).length > 0;
  for (const tag of index.variants) {
    const source = planned ? (plans[tag]?.memorySource ?? null) : null;
    const group = groups.get(source);
    if (group) group.push(tag);
    else groups.set(source, [tag]);
  }
  const charts: MemoryChart[] = [];
  for (const [source, tags] of groups) {
    const raw = memoryChart(index, tags);
    if (!raw) continue;
    const scale = byteUnitForMiB(raw.rows.flatMap((row) => row.values));
    const chart: DeviceBarsChart = {
      ...raw,
      valueName: unitColumn("peak", scale.unit),
      rows: raw.rows.map((row) => ({ ...row, values: row.values.map((v) => (v === null ? null : v * scale.fromMiB)) })),
    };
    charts.push({ source, title: memoryTitle(source, scale), note: memorySourceNote(source, planned, tags.map((tag) => index.label(tag))), scale, chart });
  }
  return charts;
}

/** "Peak memory per device (KiB): tracked tensor bytes per device". */
export function memoryTitle(source: string | null, scale: UnitScale): string {
  const what = source === null ? "" : `: ${shortSource(source)}`;
  return `Peak memory per device (${scale.unit})${what}`;
}

function memorySourceNote(source: string | null, planned: boolean, labels: readonly string[]): string {
  if (source === null) return planned ? `Variants without a recorded device plan (${labels.join(", ")}): what their memory values measure is unknown.` : MEMORY_SOURCE_UNKNOWN;
  return `Largest memory_peak_mib logged (memory_mib where no peak was logged) of ${labels.join(", ")}: ${source}. Variants whose memory measures something else are in their own chart.`;
}

/** A memory source without its parenthesised detail, for a title. */
function shortSource(source: string): string {
  const cut = source.indexOf(" (");
  return (cut > 0 ? source.slice(0, cut) : source).trim();
}
