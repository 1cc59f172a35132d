/**
 * The loss chart's lines: one per variant of this run, in the variant's
 * colour, and one per variant of each compared run, dashed. A variant whose
 * ranks each logged loss (DDP) gets a line per rank, the ranks after the
 * first fainter: a rank that stops early or runs extra steps must show, and
 * the chart then holds every stored loss point. Sampling a window turns the
 * lines into what is drawn; the real point count of the window is kept.
 */
import { lineStyle, type MarkerShape } from "./chart-line-style";
import { runColor, variantColor } from "./chart-palette";
import { RunIndex } from "./chart-run-index";
import type { SeriesBuffer } from "./chart-series-buffer";
import { runLegend } from "./chart-compare";
import { untaggedRunName } from "./chart-naming";
import { downsampleIndices, windowRange, type XWindow } from "./downsample";
import type { MetricStore } from "./metric-store";

/** Points drawn per line: about two per pixel of a wide plot. */
export const DEFAULT_BUDGET = 1200;

export interface LossLine {
  id: string;
  executionId: string;
  tag: string;
  rank: number;
  /** The variant's name (the untagged one named after its cell). */
  variant: string;
  label: string;
  color: string;
  /** A compared run's line. */
  dashed: boolean;
  /** The SVG dash pattern (null: solid) and marker shape that keep this line visible under an identical one. */
  dash: string | null;
  marker: MarkerShape;
  /** Position among the chart's lines (markers are shifted by it). */
  index: number;
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

/**
 * Metrics drawn as lines per step like the loss: the loss, and a model's parameter norm (the
 * params-not-updated scenario's "does the model move at all?").
 */
export const LINE_METRICS = [
  { metric: "loss", title: "Loss vs step", testId: "chart-loss" },
  { metric: "param_norm", title: "Parameter norm vs step", testId: "chart-param-norm" },
] as const;

/** `cellName`: what this cell's untagged run is called (see chart-naming); compared runs are named from their summaries. `metric`: which line metric (default the loss). */
export function lossLines(store: MetricStore, primaryId: string, compared: readonly string[], cellName: string | null = null, metric: string = "loss"): LossLine[] {
  const primary = store.run(primaryId)?.summary ?? null;
  const comparing = compared.length > 0;
  const lines: LossLine[] = [];
  [primaryId, ...compared].forEach((executionId, runIndex) => {
    const run = store.run(executionId);
    const index = new RunIndex(run, untaggedRunName(runIndex === 0 ? cellName : null, run?.summary ?? null));
    const runText = comparing ? runLegend(run?.summary ?? null, primary, runIndex === 0) : "";
    let runLine = 0;
    index.variants.forEach((tag, variantIndex) => {
      const ranks = index.ranks(tag, metric);
      ranks.forEach((rank, i) => {
        const name = ranks.length > 1 ? `${index.label(tag)} · rank ${rank}` : index.label(tag);
        const style = lineStyle(runLine++, runIndex > 0, lines.length);
        lines.push({
          id: `${executionId}\u0000${tag}\u0000${rank}`,
          executionId,
          tag,
          rank,
          variant: index.label(tag),
          label: runText ? `${name} — ${runText}` : name,
          color: runIndex === 0 ? variantColor(variantIndex) : runColor(runIndex, variantIndex),
          dashed: runIndex > 0,
          dash: style.dash,
          marker: style.marker,
          index: lines.length,
          faded: i > 0,
          series: index.get(tag, rank, metric)!,
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

/** Variants whose loss scales differ by more than this factor get a plot each (small multiples). */
export const SCALE_SPLIT = 10;

export interface LossPanel {
  key: string;
  /** Null for the one shared plot. */
  title: string | null;
  lines: LossLine[];
}

export interface LossLayout {
  panels: LossPanel[];
  /** Largest / smallest loss scale across the plotted groups (1 when one group). */
  ratio: number;
  /** Why the chart is split, or null when one plot holds every line. */
  reason: string | null;
}

/**
 * One plot for all lines, unless their scales differ by more than 10×
 * (DDP rank losses ≈15 and ≈480 flatten everything else against the
 * floor): then one small plot per variant (the same variant of compared
 * runs shares it), split further by line when a variant's own lines differ
 * that much. A line's scale is the magnitude of its mean finite value (O(1):
 * the buffers keep sums); all-zero lines do not count.
 */
export function lossLayout(lines: readonly LossLine[]): LossLayout {
  const groups = new Map<string, LossLine[]>();
  for (const line of lines) {
    const group = groups.get(line.tag);
    if (group) group.push(line);
    else groups.set(line.tag, [line]);
  }
  const ratio = scaleRatio(lines);
  if (groups.size === 0 || ratio <= SCALE_SPLIT) return { panels: [{ key: "all", title: null, lines: [...lines] }], ratio, reason: null };
  const panels: LossPanel[] = [];
  for (const [tag, group] of groups) {
    if (group.length > 1 && scaleRatio(group) > SCALE_SPLIT) {
      for (const line of group) panels.push({ key: line.id, title: line.label, lines: [line] });
    } else panels.push({ key: `tag:${tag}`, title: group[0]!.variant, lines: group });
  }
  const shown = Number(ratio.toPrecision(2));
  return {
    panels,
    ratio,
    reason: `Loss scales differ ${shown}× between lines (mean loss of each), more than ${SCALE_SPLIT}×: one plot per variant, each on its own y axis, so no line is flattened by another.`,
  };
}

function lineScale(line: LossLine): number | null {
  const s = line.series;
  if (s.count === 0) return null;
  const scale = Math.abs(s.sum / s.count);
  return scale > 0 && Number.isFinite(scale) ? scale : null;
}

function scaleRatio(lines: readonly LossLine[]): number {
  let lo = Infinity;
  let hi = 0;
  for (const line of lines) {
    const scale = lineScale(line);
    if (scale === null) continue;
    lo = Math.min(lo, scale);
    hi = Math.max(hi, scale);
  }
  return hi > 0 && Number.isFinite(lo) ? hi / lo : 1;
}
