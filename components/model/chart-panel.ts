/**
 * What the chart panel shows besides the loss lines: the bar charts,
 * speed-up and stragglers of this cell's run, and how its devices are
 * described. These are means over whole runs, so while a run streams they
 * are recomputed on a slower clock than the loss lines (see ChartPanel).
 * Null parts are charts the run has no data for.
 */
import type { ExecutionSummary } from "../../server/protocol/metrics-model";
import { memoryChart, samplesChart, type DeviceBarsChart } from "./chart-devices";
import { RunIndex } from "./chart-run-index";
import { speedupChart, type SpeedupChart } from "./chart-speedup";
import { stragglers, type Straggler } from "./chart-stragglers";
import { timingChart, type TimingChart } from "./chart-timing";
import type { MetricStore } from "./metric-store";

export interface DeviceNotice {
  /** True when the devices are emulated on the CPU (no real accelerator was used). */
  emulated: boolean;
  text: string;
}

export interface PanelAggregates {
  summary: ExecutionSummary | null;
  device: DeviceNotice | null;
  timing: TimingChart | null;
  samples: DeviceBarsChart | null;
  memory: DeviceBarsChart | null;
  speedup: SpeedupChart | null;
  /** Null when no variant has two ranks to compare. */
  stragglers: Straggler[] | null;
}

/** Null when this run holds no series: the panel then renders nothing. */
export function panelAggregates(store: MetricStore, primaryId: string): PanelAggregates | null {
  const run = store.run(primaryId);
  if (!run || run.series.length === 0) return null;
  const index = new RunIndex(run);
  const timing = timingChart(index);
  const multiRank = index.variants.some((tag) => index.ranks(tag).length > 1);
  return {
    summary: run.summary,
    device: run.summary ? deviceNotice(run.summary.deviceMode) : null,
    timing: timing.bars.length > 0 ? timing : null,
    samples: samplesChart(index),
    memory: memoryChart(index),
    speedup: speedupChart(index),
    stragglers: multiRank ? stragglers(index) : null,
  };
}

export function deviceNotice(deviceMode: string): DeviceNotice | null {
  if (deviceMode.trim() === "") return null;
  const emulated = /\bcpu\b|emulat/i.test(deviceMode);
  return {
    emulated,
    text: emulated
      ? `Devices are CPU-emulated: ${deviceMode}. No GPU was used; times and memory are the CPU's, not a GPU's.`
      : `Devices: ${deviceMode}`,
  };
}
