/**
 * Stragglers: within one variant, a rank whose step time (its median, the
 * charts' statistic) is more than 25 % above the median of that variant's ranks. Ranks of a DataParallel
 * run log step time on device 0 only, so their replicas are compared by
 * `apply_ms` (each replica's forward) instead.
 */
import type { RunIndex } from "./chart-run-index";
import { median, stepMedian } from "./chart-stats";

export const STRAGGLER_THRESHOLD = 0.25;

export const STRAGGLER_RULE =
  "A rank is flagged when its median step time (warm-up step excluded) exceeds the median of its variant's ranks by more than 25 % " +
  "(step_ms; apply_ms for DataParallel replicas, which log step time on device 0 only).";

export interface Straggler {
  tag: string;
  /** The variant's name (the untagged one named after its cell). */
  label: string;
  rank: number;
  metric: "step_ms" | "apply_ms";
  meanMs: number;
  medianMs: number;
  /** meanMs / medianMs − 1. */
  excess: number;
}

export function stragglers(index: RunIndex): Straggler[] {
  const flagged: Straggler[] = [];
  for (const tag of index.variants) {
    for (const metric of ["step_ms", "apply_ms"] as const) {
      const means = index
        .ranks(tag, metric)
        .map((rank) => ({ rank, mean: stepMedian(index.get(tag, rank, metric)) }))
        .filter((m): m is { rank: number; mean: number } => m.mean !== null);
      if (means.length < 2) continue;
      const med = median(means.map((m) => m.mean));
      for (const m of means) {
        if (med > 0 && m.mean > med * (1 + STRAGGLER_THRESHOLD)) {
          flagged.push({ tag, label: index.label(tag), rank: m.rank, metric, meanMs: m.mean, medianMs: med, excess: m.mean / med - 1 });
        }
      }
      break;
    }
  }
  return flagged;
}
