/**
 * Speed-up vs device count, for runs whose variant tags name a device count.
 * A variant's time per sample is its mean step time (mean over ranks of each
 * rank's mean `step_ms`, warm-up excluded) divided by the samples all its
 * ranks process per step; speed-up of an N-device variant = time per sample
 * of the 1-device variant / its own. Without `samples` everywhere, time per
 * step is used instead (the same global batch is then assumed, and said).
 */
import type { RunIndex } from "./chart-run-index";
import { meanCount, stepMean } from "./chart-stats";
import { deviceCount, variantFamily } from "./chart-variants";

export interface SpeedupPoint {
  tag: string;
  /** The tag without its count; one line per family ("DDP", "DataParallel"). */
  family: string;
  devices: number;
  /** Milliseconds per sample (or per step, see `basis`). */
  timeMs: number;
  speedup: number;
}

export interface SpeedupChart {
  basis: "sample" | "step";
  baseline: SpeedupPoint;
  /** Every other variant with a device count, by family then devices. */
  points: SpeedupPoint[];
  families: string[];
  /** The ideal line runs from 1 to this. */
  maxDevices: number;
  pointsUsed: number;
}

interface VariantTime {
  stepMs: number;
  samples: number | null;
  points: number;
}

export function speedupChart(index: RunIndex): SpeedupChart | null {
  const timed = new Map<string, VariantTime>();
  for (const tag of index.variants) {
    if (deviceCount(tag) === null) continue;
    const t = variantTime(index, tag);
    if (t) timed.set(tag, t);
  }
  const baselineTag = [...timed.keys()].find((tag) => deviceCount(tag) === 1);
  if (baselineTag === undefined || timed.size < 2) return null;
  const basis = [...timed.values()].every((t) => t.samples !== null && t.samples > 0) ? "sample" : "step";
  const per = (t: VariantTime): number => (basis === "sample" ? t.stepMs / t.samples! : t.stepMs);
  const baseMs = per(timed.get(baselineTag)!);
  const point = (tag: string): SpeedupPoint => {
    const timeMs = per(timed.get(tag)!);
    return { tag, family: variantFamily(tag), devices: deviceCount(tag)!, timeMs, speedup: baseMs / timeMs };
  };
  const points = [...timed.keys()]
    .filter((tag) => tag !== baselineTag)
    .map(point)
    .sort((a, b) => (a.family < b.family ? -1 : a.family > b.family ? 1 : a.devices - b.devices));
  const families = [...new Set(points.map((p) => p.family))];
  const maxDevices = Math.max(1, ...points.map((p) => p.devices));
  const used = [...timed.values()].reduce((sum, t) => sum + t.points, 0);
  return { basis, baseline: point(baselineTag), points, families, maxDevices, pointsUsed: used };
}

function variantTime(index: RunIndex, tag: string): VariantTime | null {
  let points = 0;
  const stepMeans: number[] = [];
  for (const rank of index.ranks(tag, "step_ms")) {
    const series = index.get(tag, rank, "step_ms")!;
    const mean = stepMean(series);
    if (mean === null) continue;
    stepMeans.push(mean);
    points += meanCount(series);
  }
  if (stepMeans.length === 0) return null;
  let samples: number | null = null;
  for (const rank of index.ranks(tag, "samples")) {
    const series = index.get(tag, rank, "samples")!;
    const mean = stepMean(series);
    if (mean === null) continue;
    samples = (samples ?? 0) + mean;
    points += meanCount(series);
  }
  const stepMs = stepMeans.reduce((a, b) => a + b, 0) / stepMeans.length;
  return stepMs > 0 ? { stepMs, samples, points } : null;
}
