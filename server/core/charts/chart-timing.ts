/**
 * Per-device stacked step-time bars: for each variant, for each rank, the
 * median time per phase (warm-up step excluded; the charts' statistic, see
 * chart-stats.ts), with the range of the step times as whiskers. `comm_ms`
 * overlaps `backward_ms` (the DDP hook times allreduce while backward still
 * runs), so it is drawn as the part of backward it covers rather than added
 * on top. A DataParallel replica other than device 0 logs only its forward
 * (`apply_ms`), which is its bar.
 */
import type { RunIndex } from "./chart-run-index";
import { meanCount, stepMedian, stepSpread, type Spread } from "./chart-stats";

export type PhaseKey = "data" | "forward" | "backward" | "comm" | "optimizer" | "apply" | "other";

export interface PhaseInfo {
  key: PhaseKey;
  label: string;
  color: string;
}

/** Stacking order, bottom to top. */
export const PHASES: readonly PhaseInfo[] = [
  // Paul Tol's "muted" set: apart from the device colours (his "bright" set) used by the other bar charts.
  { key: "data", label: "data wait", color: "#BBBBBB" },
  { key: "forward", label: "forward", color: "#332288" },
  { key: "apply", label: "replica forward (apply)", color: "#882255" },
  { key: "backward", label: "backward", color: "#88CCEE" },
  { key: "comm", label: "comm (within backward)", color: "#CC6677" },
  { key: "optimizer", label: "optimizer", color: "#117733" },
  { key: "other", label: "other (rest of step_ms)", color: "#DDCC77" },
];

export interface TimingBar {
  tag: string;
  rank: number;
  /** Category label on the x axis. */
  label: string;
  /** Median milliseconds per phase as drawn (0 when absent). */
  ms: Record<PhaseKey, number>;
  total: number;
  /** Real metric values the medians were taken over. */
  points: number;
  /**
   * Min, median and max of the time per step over the same steps as the
   * bars: `step_ms`, or `apply_ms` for a replica that logs only that, or the
   * one phase a bar has when it times only that (a forward timed alone).
   * Null when none was logged.
   */
  spread: Spread | null;
  spreadMetric: string | null;
}

export interface TimingChart {
  bars: TimingBar[];
  /** Phases some bar has, in stacking order. */
  phases: PhaseInfo[];
  points: number;
}

const STEP_PHASES = ["data", "forward", "backward", "optimizer"] as const;

export function timingChart(index: RunIndex): TimingChart {
  const bars: TimingBar[] = [];
  for (const tag of index.variants) {
    for (const rank of index.ranks(tag)) {
      const bar = timingBar(index, tag, rank);
      if (bar) bars.push(bar);
    }
  }
  const phases = PHASES.filter((p) => bars.some((b) => b.ms[p.key] > 0));
  return { bars, phases, points: bars.reduce((sum, b) => sum + b.points, 0) };
}

function timingBar(index: RunIndex, tag: string, rank: number): TimingBar | null {
  const ms: Record<PhaseKey, number> = { data: 0, forward: 0, apply: 0, backward: 0, comm: 0, optimizer: 0, other: 0 };
  let points = 0;
  let found = false;
  const mean = (name: string): number | null => {
    const series = index.get(tag, rank, name);
    const value = stepMedian(series);
    if (series && value !== null) {
      points += meanCount(series);
      found = true;
    }
    return value;
  };
  for (const phase of STEP_PHASES) ms[phase] = mean(`${phase}_ms`) ?? 0;
  const comm = mean("comm_ms");
  if (comm !== null) {
    const within = ms.backward > 0 ? Math.min(comm, ms.backward) : comm;
    ms.backward = Math.max(0, ms.backward - within);
    ms.comm = within;
  }
  const stepped = STEP_PHASES.reduce((sum, p) => sum + (p === "backward" ? ms.backward + ms.comm : ms[p]), 0);
  if (ms.forward === 0) ms.apply = mean("apply_ms") ?? 0;
  const step = mean("step_ms");
  if (step !== null && step > stepped + ms.apply) ms.other = step - stepped - ms.apply;
  if (!found) return null;
  const total = PHASES.reduce((sum, p) => sum + ms[p.key], 0);
  const stepSeries = index.get(tag, rank, "step_ms");
  const phasesLogged = STEP_PHASES.filter((phase) => (index.get(tag, rank, `${phase}_ms`)?.count ?? 0) > 0);
  const spreadMetric =
    stepSeries && stepSeries.count > 0
      ? "step_ms"
      : (index.get(tag, rank, "apply_ms")?.count ?? 0) > 0
        ? "apply_ms"
        : phasesLogged.length === 1
          ? `${phasesLogged[0]}_ms`
          : null;
  const spread = spreadMetric === null ? null : stepSpread(index.get(tag, rank, spreadMetric));
  return { tag, rank, label: `${index.label(tag)} · ${rank}`, ms, total, points, spread, spreadMetric: spread ? spreadMetric : null };
}
