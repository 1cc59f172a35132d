/**
 * One statistic per number, the charts' half: the timing chart's bars and
 * the speed-up chart are drawn from the median of the steps (warm-up
 * excluded) with their range, on the series of kernels/protocol/
 * chart-statistic.json, which the verdicts' half (kernels/tests/
 * test_chart_statistic.py) holds to the same values. The "gil-outlier" case
 * is the run where a mean drew one device 70 times slower than its typical
 * step and a verdict said the opposite of the chart beside it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { RunIndex } from "../../server/core/charts/chart-run-index";
import { SeriesBuffer } from "../../server/core/charts/chart-series-buffer";
import { speedupChart } from "../../server/core/charts/chart-speedup";
import { timingChart, type PhaseKey } from "../../server/core/charts/chart-timing";

interface Fixture {
  cases: Array<{
    name: string;
    series: Array<{ tag: string; rank: number; name: string; steps: number[]; values: number[] }>;
    bars: Array<{ tag: string; rank: number; metric: string; value: number; min: number; max: number }>;
    speedups: Array<{ tag: string; baseline: string; basis: "sample" | "step"; value: number }>;
  }>;
}

const FIXTURE = JSON.parse(readFileSync(path.resolve(__dirname, "../../kernels/protocol/chart-statistic.json"), "utf8")) as Fixture;

function indexOf(series: Fixture["cases"][number]["series"]): RunIndex {
  return new RunIndex({
    executionId: "e1",
    summary: null,
    plans: {},
    series: series.map((s) => {
      const buffer = new SeriesBuffer({ tag: s.tag, name: s.name, rank: s.rank });
      buffer.addMany(s.steps, s.values);
      return buffer;
    }),
  });
}

const PHASE_OF: Record<string, PhaseKey | "step"> = { forward_ms: "forward", backward_ms: "backward", data_ms: "data", optimizer_ms: "optimizer", apply_ms: "apply", step_ms: "step" };

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);
}

describe("the charts draw the median of the steps, with their range", () => {
  for (const c of FIXTURE.cases) {
    it(`${c.name}: each bar is its steps' median and its whiskers their range`, () => {
      const chart = timingChart(indexOf(c.series));
      for (const expected of c.bars) {
        const bar = chart.bars.find((b) => b.tag === expected.tag && b.rank === expected.rank);
        assert.ok(bar, `a bar for ${expected.tag} rank ${expected.rank}`);
        const phase = PHASE_OF[expected.metric]!;
        const drawn = phase === "step" ? bar.total : bar.ms[phase];
        close(drawn, expected.value, `${expected.tag} · ${expected.rank} ${expected.metric}`);
        // The whiskers are the range of the same steps: the step time, or the one phase a bar times alone.
        assert.ok(bar.spread, "a bar shows its range");
        close(bar.spread.min, expected.min, "fastest step");
        close(bar.spread.max, expected.max, "slowest step");
        close(bar.spread.median, expected.value, "the whisker's tick is the bar's own value");
      }
    });
    if (c.speedups.length > 0) {
      it(`${c.name}: the speed-up chart divides the same medians`, () => {
        const chart = speedupChart(indexOf(c.series))!;
        for (const expected of c.speedups) {
          assert.equal(chart.baseline.tag, expected.baseline);
          assert.equal(chart.basis, expected.basis);
          close(chart.points.find((p) => p.tag === expected.tag)!.speedup, expected.value, `speed-up of ${expected.tag}`);
        }
      });
    }
  }

  it("an outlier step moves no bar: one device stays the faster one, as the verdict says", () => {
    const chart = timingChart(indexOf(FIXTURE.cases[0]!.series));
    const one = chart.bars.find((b) => b.tag === "1 device")!;
    const dp = chart.bars.find((b) => b.tag === "DataParallel x2")!;
    assert.ok(one.ms.forward < dp.ms.forward, `1 device ${one.ms.forward} ms vs DataParallel ${dp.ms.forward} ms`);
  });
});
