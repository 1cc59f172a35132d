/**
 * The loss chart's lines: one per variant of this run, in the variant's
 * colour, and one per variant of each compared run, dashed. A variant whose
 * ranks each logged loss (DDP) gets a line per rank, the ranks after the
 * first fainter: a rank that stops early or runs extra steps must show, and
 * the chart then holds every stored loss point. Sampling a window turns the
 * lines into what is drawn; the real point count of the window is kept.
 */
import { runColor, variantColor } from "./chart-palette";
import { RunIndex } from "./chart-run-index";
import type { SeriesBuffer } from "./chart-series-buffer";
import { runLegend } from "./chart-compare";
import { variantLabel } from "./chart-variants";
import { downsampleIndices, windowRange, type XWindow } from "./downsample";
import type { MetricStore } from "./metric-store";

/** Points drawn per line: about two per pixel of a wide plot. */
export const DEFAULT_BUDGET = 1200;

export interface LossLine {
  id: string;
  executionId: string;
  tag: string;
  rank: number;
  label: string;
  color: string;
  dashed: boolean;
  /** A rank after a variant's first: drawn thinner and fainter. */
  faded: boolean;
  series: SeriesBuffer;
}

export interface SampledLine {
  line: LossLine;
  data: Array<{ x: number; y: number | null }>;
}

export interface SampledLoss {
  lines: SampledLine[];
  /** Real points inside the window, over all lines. */
  realPoints: number;
  /** Points handed to the chart. */
  drawnPoints: number;
}

export function lossLines(store: MetricStore, primaryId: string, compared: readonly string[]): LossLine[] {
  const primary = store.run(primaryId)?.summary ?? null;
  const comparing = compared.length > 0;
  const lines: LossLine[] = [];
  [primaryId, ...compared].forEach((executionId, runIndex) => {
    const run = store.run(executionId);
    const index = new RunIndex(run);
    const runText = comparing ? runLegend(run?.summary ?? null, primary, runIndex === 0) : "";
    index.variants.forEach((tag, variantIndex) => {
      const ranks = index.ranks(tag, "loss");
      ranks.forEach((rank, i) => {
        const name = ranks.length > 1 ? `${variantLabel(tag)} · rank ${rank}` : variantLabel(tag);
        lines.push({
          id: `${executionId}\u0000${tag}\u0000${rank}`,
          executionId,
          tag,
          rank,
          label: runText ? `${name} — ${runText}` : name,
          color: runIndex === 0 ? variantColor(variantIndex) : runColor(runIndex, variantIndex),
          dashed: runIndex > 0,
          faded: i > 0,
          series: index.get(tag, rank, "loss")!,
        });
      });
    });
  });
  return lines;
}

/** Each line's points in the window, downsampled to `budget` per line (null: every real point). */
export function sampleLoss(lines: readonly LossLine[], window: XWindow | null, budget: number | null): SampledLoss {
  let realPoints = 0;
  let drawnPoints = 0;
  const sampled = lines.map((line) => {
    const { lo, hi } = windowRange(line.series, window);
    realPoints += hi - lo;
    const indices = budget === null ? null : downsampleIndices(line.series, window, budget);
    const count = indices ? indices.length : hi - lo;
    const data = new Array<{ x: number; y: number | null }>(count);
    for (let k = 0; k < count; k++) {
      const i = indices ? indices[k]! : lo + k;
      data[k] = { x: line.series.steps[i]!, y: line.series.valueAt(i) };
    }
    drawnPoints += count;
    return { line, data };
  });
  return { lines: sampled, realPoints, drawnPoints };
}
