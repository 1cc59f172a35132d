/**
 * Speed-up vs device count, for runs whose variant tags name a device count.
 * A variant's time per sample is its step time (mean over ranks of each
 * rank's median `step_ms`, warm-up excluded: the charts' statistic) divided
 * by the samples all its ranks process per step (each rank's median); speed-up of an N-device variant = time per sample
 * of the 1-device variant / its own. Without `samples` everywhere, time per
 * step is used instead (the same global batch is then assumed, and said).
 *
 * A speed-up the hardware cannot give is flagged as noise, never drawn as a
 * result: emulated devices on a host with C cores cannot run more than
 * min(N, C)× faster than one, and N virtual devices sharing GPUs cannot run
 * more than N× faster (super-linear). Both happen on a busy shared host,
 * where one run's timing moves by ±20 %.
 *
 * Each point carries the range its steps allow: the slowest step of the
 * variant against the fastest of one device, up to the reverse (per-step
 * step_ms after the warm-up, over all ranks). A range that includes 1× says
 * the speed-up is within the noise.
 */
import type { DevicePlan } from "../protocol/kernel-messages";
import type { RunIndex } from "./chart-run-index";
import { meanCount, stepMedian, stepSpread } from "./chart-stats";
import { deviceCount, variantFamily } from "./chart-variants";

export interface SpeedupPoint {
  tag: string;
  /** The tag without its count; one line per family ("DDP", "DataParallel"). */
  family: string;
  devices: number;
  /** Milliseconds per sample (or per step, see `basis`). */
  timeMs: number;
  speedup: number;
  /** Why this speed-up is impossible on the devices the plan says it ran on (timing noise); null when it is possible or unknown. */
  noise: string | null;
  /** The speed-ups the steps allow: one device's fastest step against this variant's slowest, to the reverse; null without per-step times. */
  range: { low: number; high: number } | null;
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
  /** Fastest and slowest step after the warm-up, over every rank. */
  fastestMs: number | null;
  slowestMs: number | null;
  samples: number | null;
  points: number;
}

export function speedupChart(index: RunIndex, plans: Readonly<Record<string, DevicePlan>> = {}): SpeedupChart | null {
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
  const base = timed.get(baselineTag)!;
  const baseMs = per(base);
  // The same per-sample (or per-step) scaling as the means, applied to single steps.
  const perStep = (t: VariantTime, ms: number | null): number | null => (ms === null ? null : basis === "sample" ? ms / t.samples! : ms);
  const point = (tag: string): SpeedupPoint => {
    const t = timed.get(tag)!;
    const timeMs = per(t);
    const devices = deviceCount(tag)!;
    const speedup = baseMs / timeMs;
    const [baseFast, baseSlow, fast, slow] = [perStep(base, base.fastestMs), perStep(base, base.slowestMs), perStep(t, t.fastestMs), perStep(t, t.slowestMs)];
    const range = baseFast !== null && baseSlow !== null && fast !== null && slow !== null && fast > 0 && slow > 0 ? { low: baseFast / slow, high: baseSlow / fast } : null;
    return { tag, family: variantFamily(tag), devices, timeMs, speedup, noise: tag === baselineTag ? null : impossibleSpeedup(speedup, devices, plans[tag]), range };
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

/** The most an N-device variant can gain over one device on what its plan ran on, or null when real GPUs (or no plan) leave it open. */
export function speedupLimit(devices: number, plan: DevicePlan | undefined): number | null {
  if (!plan) return null;
  if (plan.kind === "cpu-emulated") return Math.max(1, Math.min(devices, plan.hostCores));
  if (plan.kind === "cuda-shared") return devices;
  return null;
}

/** Why a speed-up is impossible (so noise), or null. */
export function impossibleSpeedup(speedup: number, devices: number, plan: DevicePlan | undefined): string | null {
  const limit = speedupLimit(devices, plan);
  if (limit === null || !plan || !(speedup > limit)) return null;
  const measured = `${Number(speedup.toPrecision(3))}×`;
  if (plan.kind === "cpu-emulated") {
    const cores = `${plan.hostCores} core${plan.hostCores === 1 ? "" : "s"}`;
    return `noise: ${measured} on ${devices} emulated devices is impossible — the host has ${cores} for ${plan.count} emulated device${plan.count === 1 ? "" : "s"}, so at most ${limit}× over one device; the timing moved, the devices did not get faster.`;
  }
  const gpus = `${plan.gpusUsed} GPU${plan.gpusUsed === 1 ? "" : "s"}`;
  return `noise: ${measured} on ${devices} virtual devices sharing ${gpus} is super-linear, which sharing cannot give (at most ${limit}×); the timing moved, the devices did not get faster.`;
}

function variantTime(index: RunIndex, tag: string): VariantTime | null {
  let points = 0;
  const stepMeans: number[] = [];
  let fastestMs: number | null = null;
  let slowestMs: number | null = null;
  for (const rank of index.ranks(tag, "step_ms")) {
    const series = index.get(tag, rank, "step_ms")!;
    const mean = stepMedian(series);
    if (mean === null) continue;
    stepMeans.push(mean);
    points += meanCount(series);
    const spread = stepSpread(series);
    if (spread) {
      fastestMs = fastestMs === null ? spread.min : Math.min(fastestMs, spread.min);
      slowestMs = slowestMs === null ? spread.max : Math.max(slowestMs, spread.max);
    }
  }
  if (stepMeans.length === 0) return null;
  let samples: number | null = null;
  for (const rank of index.ranks(tag, "samples")) {
    const series = index.get(tag, rank, "samples")!;
    const mean = stepMedian(series);
    if (mean === null) continue;
    samples = (samples ?? 0) + mean;
    points += meanCount(series);
  }
  const stepMs = stepMeans.reduce((a, b) => a + b, 0) / stepMeans.length;
  return stepMs > 0 ? { stepMs, fastestMs, slowestMs, samples, points } : null;
}
