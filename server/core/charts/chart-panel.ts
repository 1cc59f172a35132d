/**
 * What the chart panel shows besides the loss lines: the bar charts,
 * speed-up and stragglers of this cell's run, and how its devices are
 * described. These are means over whole runs, so while a run streams they
 * are recomputed on a slower clock than the loss lines (see ChartPanel).
 * Null parts are charts the run has no data for.
 */
import type { DevicePlan } from "../protocol/kernel-messages";
import type { ExecutionSummary } from "../protocol/metrics-model";
import { samplesChart, utilizationChart, type DeviceBarsChart } from "./chart-devices";
import { memoryCharts, type MemoryChart } from "./chart-memory";
import { untaggedRunName } from "./chart-naming";
import { RunIndex } from "./chart-run-index";
import { speedupChart, type SpeedupChart } from "./chart-speedup";
import { stragglers, type Straggler } from "./chart-stragglers";
import { timingChart, type TimingChart } from "./chart-timing";
import type { MetricStore } from "./metric-store";

export interface DeviceNotice {
  /** True when some devices were not real GPUs of their own (CPU emulation, or virtual devices sharing a GPU). */
  emulated: boolean;
  text: string;
  /** What each variant ran on, as the toolkit planned it (empty for runs from before plans were recorded). */
  variants: Array<{ tag: string; label: string }>;
}

/** The default memory note, for runs without recorded plans. */
export const MEMORY_NOTE_FALLBACK =
  "Largest memory_peak_mib logged (memory_mib where no peak was logged). On CPU this is the process's RSS; emulated devices count their tensors' bytes.";

export interface PanelAggregates {
  summary: ExecutionSummary | null;
  device: DeviceNotice | null;
  timing: TimingChart | null;
  samples: DeviceBarsChart | null;
  /** One chart per memory source (never two quantities on one axis); empty when no memory was logged. */
  memory: MemoryChart[];
  /** Mean NVML GPU utilisation per GPU; null without a GPU monitor. */
  utilization: DeviceBarsChart | null;
  speedup: SpeedupChart | null;
  /** Null when no variant has two ranks to compare. */
  stragglers: Straggler[] | null;
}

/** Null when this run holds no series: the panel then renders nothing. `cellName` names the untagged variant. */
export function panelAggregates(store: MetricStore, primaryId: string, cellName: string | null = null): PanelAggregates | null {
  const run = store.run(primaryId);
  if (!run || run.series.length === 0) return null;
  const index = new RunIndex(run, untaggedRunName(cellName, run.summary));
  const timing = timingChart(index);
  const multiRank = index.variants.some((tag) => index.ranks(tag).length > 1);
  return {
    summary: run.summary,
    device: deviceNotice(run.summary?.deviceMode ?? "", run.plans, index.variants),
    timing: timing.bars.length > 0 ? timing : null,
    samples: samplesChart(index),
    memory: memoryCharts(index, run.plans),
    utilization: utilizationChart(index),
    speedup: speedupChart(index, run.plans),
    stragglers: multiRank ? stragglers(index) : null,
  };
}

/**
 * How the panel describes the devices. With the plans the toolkit recorded,
 * each variant is named with the plan that ran (and why, when it is not one
 * real GPU per device); runs from before plans fall back to the kernel's
 * description. A variant the toolkit reported no plan for (a cell that times
 * with `lab.log` alone) is named with the kernel's description, so an
 * emulated variant never passes for a GPU by saying nothing.
 */
export function deviceNotice(deviceMode: string, plans: Readonly<Record<string, DevicePlan>> = {}, variants: readonly string[] = []): DeviceNotice | null {
  const tagged = Object.entries(plans).sort(([a], [b]) => a.localeCompare(b));
  const kernelEmulated = /\bcpu\b|emulat/i.test(deviceMode);
  if (tagged.length === 0) {
    if (deviceMode.trim() === "") return null;
    return {
      emulated: kernelEmulated,
      text: kernelEmulated
        ? `Devices are CPU-emulated: ${deviceMode}. No GPU was used; times and memory are the CPU's, not a GPU's.`
        : `Devices: ${deviceMode}`,
      variants: [],
    };
  }
  const kinds = new Set(tagged.map(([, plan]) => plan.kind));
  const sentences: string[] = [];
  if (kinds.has("cpu-emulated")) sentences.push("Devices are CPU-emulated where a variant says so: no GPU was used there; its times and memory are the CPU's, not a GPU's.");
  if (kinds.has("cuda-shared")) sentences.push("Virtual devices share a GPU where a variant says so: they are not separate GPUs, so their times and speed-ups are not those of as many GPUs.");
  const unplanned = deviceMode.trim() === "" ? [] : variants.filter((tag) => !Object.hasOwn(plans, tag));
  if (unplanned.length > 0 && kernelEmulated && !kinds.has("cpu-emulated")) {
    sentences.push("Devices are CPU-emulated where a variant says so: no GPU was used there; its times and memory are the CPU's, not a GPU's.");
  }
  if (sentences.length === 0) sentences.push("Devices: real GPUs, one per device.");
  return {
    emulated: kinds.has("cpu-emulated") || kinds.has("cuda-shared") || (unplanned.length > 0 && kernelEmulated),
    text: sentences.join(" "),
    variants: [
      ...tagged.map(([tag, plan]) => ({ tag, label: plan.label })),
      ...unplanned.map((tag) => ({ tag, label: `no plan reported; it ran in this kernel: ${deviceMode}` })),
    ],
  };
}

/** What the memory bars measure: the plans' memory sources, one sentence, or one per variant when they differ. */
export function memoryNote(plans: Readonly<Record<string, DevicePlan>>): string {
  const tagged = Object.entries(plans).sort(([a], [b]) => a.localeCompare(b));
  if (tagged.length === 0) return MEMORY_NOTE_FALLBACK;
  const sources = new Set(tagged.map(([, plan]) => plan.memorySource));
  const lead = "Largest memory_peak_mib logged (memory_mib where no peak was logged)";
  if (sources.size === 1) return `${lead}: ${[...sources][0]}.`;
  return `${lead}; these measure different things: ${tagged.map(([tag, plan]) => `${tag === "" ? "untagged" : tag}: ${plan.memorySource}`).join("; ")}.`;
}
