/**
 * Recomputes a verdict's number from the stored metric series of the run it
 * names, with the charts' own code (SeriesBuffer, the warm-up rule, the
 * speed-up chart): a verdict that disagrees with its charts fails here.
 */
import { RunIndex } from "../../server/core/charts/chart-run-index";
import { SeriesBuffer } from "../../server/core/charts/chart-series-buffer";
import { speedupChart } from "../../server/core/charts/chart-speedup";
import { median, peak, stepMean } from "../../server/core/charts/chart-stats";
import type { ExecutionMetrics } from "../../server/core/protocol/metrics-model";
import type { VerdictReport } from "../../server/core/protocol/verdict-model";

export type NumberSource = NonNullable<VerdictReport["claims"][number]["numbers"][number]["source"]>;

function buffersOf(metrics: ExecutionMetrics): SeriesBuffer[] {
  return metrics.series.map((s) => {
    const buffer = new SeriesBuffer({ tag: s.tag, name: s.name, rank: s.rank });
    buffer.addMany(s.steps, s.values);
    return buffer;
  });
}

/** The value at `step` of a series, or null. */
function at(buffer: SeriesBuffer, step: number): number | null {
  for (let i = 0; i < buffer.length; i++) if (buffer.steps[i] === step) return buffer.valueAt(i);
  return null;
}

/** The statistic `source` names, computed from the stored series; null when the series do not give one. */
export function recompute(source: NumberSource, metrics: ExecutionMetrics): number | null {
  const buffers = buffersOf(metrics);
  const series = (rank: number) => buffers.find((b) => b.key.tag === source.tag && b.key.name === source.metric && b.key.rank === rank);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  switch (source.statistic) {
    case "mean": {
      const means = source.ranks.map((rank) => stepMean(series(rank))).filter((v): v is number => v !== null);
      return means.length > 0 ? mean(means) : null;
    }
    case "peak": {
      const peaks = source.ranks.map((rank) => peak(series(rank))).filter((v): v is number => v !== null);
      return peaks.length > 0 ? Math.max(...peaks) : null;
    }
    case "first":
    case "last":
    case "value": {
      const step = source.steps[0];
      if (step === undefined) return null;
      const values = source.ranks.map((rank) => { const s = series(rank); return s ? at(s, step) : null; }).filter((v): v is number => v !== null);
      return values.length > 0 ? mean(values) : null;
    }
    case "min":
    case "median":
    case "max": {
      const perStep = source.steps
        .map((step) => source.ranks.map((rank) => { const s = series(rank); return s ? at(s, step) : null; }).filter((v): v is number => v !== null))
        .filter((values) => values.length > 0)
        .map(mean);
      if (perStep.length === 0) return null;
      return source.statistic === "min" ? Math.min(...perStep) : source.statistic === "max" ? Math.max(...perStep) : median(perStep);
    }
    case "speedup": {
      const chart = speedupChart(new RunIndex({ executionId: metrics.execution.executionId, summary: null, plans: {}, series: buffers }));
      if (chart === null || (source.baseline !== undefined && chart.baseline.tag !== source.baseline)) return null;
      if (chart.basis !== source.basis) return null;
      if (source.tag === chart.baseline.tag) return chart.baseline.speedup;
      return chart.points.find((p) => p.tag === source.tag)?.speedup ?? null;
    }
    default:
      return null;
  }
}
