/** A cell's compact live view of its run's metrics: the latest values per rank, merged point by point. */
import type { LiveMetrics } from "../core/protocol/notebook-model";

/** Latest values per rank, for the cell's compact live view. */
export function mergeLiveMetrics(current: LiveMetrics | null, point: { rank: number; step: number; values: Record<string, number | null> }): LiveMetrics {
  const ranks = current ? [...current.ranks] : [];
  const at = ranks.findIndex((row) => row.rank === point.rank);
  const previous = at === -1 ? undefined : ranks[at];
  const row = { rank: point.rank, step: Math.max(point.step, previous?.step ?? 0), values: { ...previous?.values, ...point.values } };
  if (at === -1) {
    ranks.push(row);
    ranks.sort((a, b) => a.rank - b.rank);
  } else {
    ranks[at] = row;
  }
  return { points: (current?.points ?? 0) + 1, ranks };
}
