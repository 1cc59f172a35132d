/**
 * Synthetic executions for the chart benchmark and tests: a loss curve that
 * decays with noise and spikes, and per-rank phase timings, in the same
 * shape as stored metrics. Deterministic (seeded), so runs compare.
 */
import type { ExecutionMetrics, ExecutionSummary, MetricSeriesData } from "../../server/core/protocol/metrics-model";

export function syntheticSummary(executionId: string, overrides: Partial<ExecutionSummary> = {}): ExecutionSummary {
  return {
    executionId,
    notebookId: "nb-synthetic",
    notebookTitle: "Synthetic",
    cellId: "cell-synthetic",
    executionCount: 1,
    status: "ok",
    startedAt: "2026-01-01T12:00:00.000Z",
    deviceMode: "4× cpu (emulated, no CUDA)",
    devicePlans: {},
    templateId: null,
    parameters: null,
    pointCount: 0,
    ...overrides,
  };
}

/** A small linear congruential generator: the same numbers on every machine. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** `count` loss values for steps `from`…: exponential decay over the run, noise, a spike every 50,000 steps. */
export function lossColumns(count: number, from = 0, seed = 7, scale = 1): { steps: number[]; values: number[] } {
  const random = seeded(seed + from);
  const steps = new Array<number>(count);
  const values = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const step = from + i;
    steps[i] = step;
    values[i] = scale * (2.3 * Math.exp(-step / Math.max(2_000, count / 5)) + 0.05 + random() * 0.04) + (step % 50_000 === 49_999 ? 0.8 : 0);
  }
  return { steps, values };
}

export interface SyntheticVariant {
  tag: string;
  ranks: number;
  /** Loss points of rank 0. */
  lossPoints: number;
  /** Steps of per-rank timing. */
  timingSteps: number;
  stepMs: number;
  /** Batch samples per step over all ranks. */
  batch: number;
}

export function syntheticExecution(executionId: string, variants: readonly SyntheticVariant[], summary: Partial<ExecutionSummary> = {}): ExecutionMetrics {
  const series: MetricSeriesData[] = [];
  variants.forEach((v, variantIndex) => {
    const loss = lossColumns(v.lossPoints, 0, 7 + variantIndex, 1 + variantIndex * 0.15);
    series.push({ tag: v.tag, name: "loss", rank: 0, steps: loss.steps, values: loss.values });
    for (let rank = 0; rank < v.ranks; rank++) {
      const random = seeded(rank * 31 + v.ranks);
      const steps = Array.from({ length: v.timingSteps }, (_, i) => i);
      const column = (mean: number) => steps.map((s) => (s === 0 ? mean * 5 : mean * (0.9 + random() * 0.2)));
      const phase = (name: string, share: number) => series.push({ tag: v.tag, name, rank, steps, values: column(v.stepMs * share) });
      phase("step_ms", 1);
      phase("data_ms", 0.1);
      phase("forward_ms", 0.3);
      phase("backward_ms", 0.45);
      phase("optimizer_ms", 0.1);
      if (v.ranks > 1) phase("comm_ms", 0.2);
      series.push({ tag: v.tag, name: "samples", rank, steps, values: steps.map(() => v.batch / v.ranks) });
      series.push({ tag: v.tag, name: "memory_mib", rank, steps, values: steps.map((s) => 300 + rank * 10 + Math.min(s, 20)) });
    }
  });
  const points = series.reduce((sum, s) => sum + s.steps.length, 0);
  return { execution: syntheticSummary(executionId, { pointCount: points, ...summary }), series };
}
