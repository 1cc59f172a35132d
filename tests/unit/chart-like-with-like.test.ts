/**
 * The rules that keep charts comparing like with like (issue 13): integer
 * step ticks, byte units per chart, tick labels that never overlap, a
 * speed-up the devices cannot give flagged as noise, one memory source per
 * chart, timing spread under the warm-up rule, small multiples when loss
 * scales are far apart, a distinct dash and marker per line, and untagged
 * runs named after their cell.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticSummary } from "../helpers/chart-synthetic";
import { categoryTickLayout, labelWidth, valueAxisWidth } from "../../server/core/charts/chart-axis-layout";
import { lineStyle, markerIndices } from "../../server/core/charts/chart-line-style";
import { lossLayout, lossLines, SCALE_SPLIT } from "../../server/core/charts/chart-loss";
import { memoryCharts } from "../../server/core/charts/chart-memory";
import { cellChartNames, lastHeading, untaggedRunName } from "../../server/core/charts/chart-naming";
import { panelAggregates } from "../../server/core/charts/chart-panel";
import { RunIndex } from "../../server/core/charts/chart-run-index";
import { impossibleSpeedup, speedupChart } from "../../server/core/charts/chart-speedup";
import { stepMean, stepSpread } from "../../server/core/charts/chart-stats";
import { integerTicks, niceTicks, tickText } from "../../server/core/charts/chart-svg";
import { timingChart } from "../../server/core/charts/chart-timing";
import { byteUnitForMiB, unitColumn } from "../../server/core/charts/chart-units";
import { MetricStore } from "../../server/core/charts/metric-store";
import type { DevicePlan } from "../../server/core/protocol/kernel-messages";
import type { MetricSeriesData } from "../../server/core/protocol/metrics-model";
import type { Cell } from "../../server/core/protocol/notebook-model";

const RSS = "process RSS per rank";
const TRACKED = "tracked tensor bytes per device (parameters, buffers, inputs, outputs; not activations)";

function plan(kind: DevicePlan["kind"], count: number, overrides: Partial<DevicePlan> = {}): DevicePlan {
  return {
    kind, engine: count === 1 ? "single" : "DataParallel", count, placement: "auto", gpus: kind === "cpu-emulated" ? 0 : 1, gpusUsed: kind === "cpu-emulated" ? 0 : 1,
    backend: null, hostCores: 2, devices: [], names: [], streams: kind === "cuda-shared", memorySource: kind === "cpu-emulated" ? TRACKED : "allocator", label: `${count}× ${kind}`, reason: null,
    ...overrides,
  };
}

function series(tag: string, rank: number, name: string, values: Array<number | null>): MetricSeriesData {
  return { tag, rank, name, steps: values.map((_, i) => i), values };
}

function storeOf(data: MetricSeriesData[], plans: Record<string, DevicePlan> = {}): MetricStore {
  const store = new MetricStore();
  store.load({ execution: syntheticSummary("e1", { devicePlans: plans }), series: data });
  return store;
}

describe("integer step ticks", () => {
  it("are whole numbers only, however short or zoomed the axis", () => {
    assert.deepEqual(integerTicks(0, 3, 6), [0, 1, 2, 3]);
    assert.deepEqual(integerTicks(0, 1.5, 6), [0, 1]);
    assert.deepEqual(integerTicks(0.2, 0.8, 6), [], "no step inside the window: no fractional tick either");
    assert.deepEqual(integerTicks(2, 2, 6), [2]);
    assert.deepEqual(integerTicks(0, 1000, 5), [0, 200, 400, 600, 800, 1000]);
    for (const [lo, hi] of [[0, 4], [0.5, 7.25], [3, 19], [0, 2]] as const) {
      for (const t of integerTicks(lo, hi, 6)) assert.ok(Number.isInteger(t) && t >= lo && t <= hi, `${t} in [${lo}, ${hi}]`);
    }
  });
});

describe("byte units per chart", () => {
  it("pick the largest unit in which the largest value is at least 1", () => {
    assert.deepEqual(byteUnitForMiB([0.0026, 0.001]), { unit: "KiB", fromMiB: 1024 });
    assert.equal(byteUnitForMiB([0.0000005]).unit, "B");
    assert.equal(byteUnitForMiB([12, 900]).unit, "MiB");
    assert.equal(byteUnitForMiB([70_000, null]).unit, "GiB");
    assert.equal(byteUnitForMiB([]).unit, "MiB");
    assert.equal(unitColumn("peak", "KiB"), "peak_kib");
  });

  it("scale a memory chart's values exactly and name the unit in its title and CSV column", () => {
    const store = storeOf([series("DataParallel x2", 0, "memory_mib", [0.0026, 0.0026]), series("DataParallel x2", 1, "memory_mib", [0.001, 0.001])], {
      "DataParallel x2": plan("cpu-emulated", 2),
    });
    const [chart] = memoryCharts(new RunIndex(store.run("e1")), store.run("e1")!.plans);
    assert.ok(chart);
    assert.equal(chart.scale.unit, "KiB");
    assert.equal(chart.chart.valueName, "peak_kib");
    assert.match(chart.title, /^Peak memory per device \(KiB\): tracked tensor bytes per device$/);
    assert.deepEqual(chart.chart.rows[0]!.values, [0.0026 * 1024, 0.001 * 1024]);
  });
});

describe("memory charts", () => {
  it("never put two memory sources on one axis: one chart per source, each saying what it measures", () => {
    const data = [
      series("1 device", 0, "memory_mib", [300, 310]),
      series("DDP x2", 0, "memory_mib", [320, 330]),
      series("DDP x2", 1, "memory_mib", [321, 331]),
      series("DataParallel x2", 0, "memory_mib", [0.5, 0.5]),
      series("DataParallel x2", 1, "memory_mib", [0.25, 0.25]),
    ];
    const plans = { "1 device": plan("cpu-emulated", 1, { memorySource: RSS }), "DDP x2": plan("cpu-emulated", 2, { memorySource: RSS }), "DataParallel x2": plan("cpu-emulated", 2) };
    const store = storeOf(data, plans);
    const charts = memoryCharts(new RunIndex(store.run("e1")), store.run("e1")!.plans);
    assert.equal(charts.length, 2);
    assert.deepEqual(charts.map((c) => [c.source, c.chart.rows.map((r) => r.tag)]), [
      [RSS, ["1 device", "DDP x2"]],
      [TRACKED, ["DataParallel x2"]],
    ]);
    assert.deepEqual(charts.map((c) => c.scale.unit), ["MiB", "KiB"]);
    assert.match(charts[0]!.title, /process RSS per rank/);
    assert.match(charts[1]!.note, /tracked tensor bytes/);
    assert.deepEqual(panelAggregates(store, "e1")!.memory.map((c) => c.source), [RSS, TRACKED], "the panel shows them apart");
  });

  it("keep one chart for a run without plans, saying what the values usually are", () => {
    const store = storeOf([series("a", 0, "memory_mib", [1, 2]), series("b", 0, "memory_mib", [3, 4])]);
    const charts = memoryCharts(new RunIndex(store.run("e1")), {});
    assert.equal(charts.length, 1);
    assert.equal(charts[0]!.source, null);
    assert.match(charts[0]!.note, /RSS/);
  });
});

describe("category tick labels", () => {
  it("lie flat when each fits its band, slant or stand when they would overlap", () => {
    const labels = ["DataParallel x2 · 0", "DataParallel x2 · 1"];
    assert.equal(categoryTickLayout(labels, 600).angle, 0);
    assert.equal(categoryTickLayout(labels, 260).angle, -35, "two 19-character labels do not fit 130 px bands, slanted they do");
    assert.equal(categoryTickLayout(Array.from({ length: 8 }, (_, i) => `DataParallel x3 · ${i}`), 620).angle, -90);
    assert.deepEqual(categoryTickLayout(Array.from({ length: 100 }, (_, i) => `DDP x100 · ${i}`), 600), { angle: -90, height: 100, interval: 3 }, "6 px bands: every 4th label");
    // No two labels' boxes (axis-aligned, around the turned text) may intersect, at any width.
    const rad = (35 * Math.PI) / 180;
    for (const count of [2, 5, 8, 16, 40]) {
      const many = Array.from({ length: count }, (_, i) => `DataParallel x4 · ${i}`);
      for (const width of [150, 250, 330, 500, 800, 1200]) {
        const layout = categoryTickLayout(many, width);
        const w = labelWidth(many[0]!);
        const boxWidth = layout.angle === 0 ? w : layout.angle === -35 ? w * Math.cos(rad) + 13 * Math.sin(rad) : 13;
        assert.ok(boxWidth < (width / count) * (layout.interval + 1), `${count} labels in ${width}px: ${JSON.stringify(layout)}`);
      }
    }
  });
});

describe("speed-up noise", () => {
  it("flags a super-linear speed-up of emulated devices on fewer cores, naming the cores and devices", () => {
    const reason = impossibleSpeedup(2.9, 2, plan("cpu-emulated", 3, { hostCores: 2 }));
    assert.ok(reason);
    assert.match(reason, /^noise: 2\.9× on 2 emulated devices is impossible — the host has 2 cores for 3 emulated devices/);
    assert.equal(impossibleSpeedup(1.8, 2, plan("cpu-emulated", 2, { hostCores: 2 })), null);
    assert.match(impossibleSpeedup(2.5, 3, plan("cpu-emulated", 3, { hostCores: 2 })) ?? "", /at most 2×/, "beyond the cores, even when below N");
    assert.match(impossibleSpeedup(4.5, 4, plan("cuda-shared", 4)) ?? "", /virtual devices sharing 1 GPU is super-linear/);
    assert.equal(impossibleSpeedup(3.5, 4, plan("cuda-shared", 4)), null);
    assert.equal(impossibleSpeedup(5, 4, plan("cuda", 4)), null, "real GPUs: not judged");
    assert.equal(impossibleSpeedup(5, 4, undefined), null, "no plan: not judged");
  });

  it("is set on the chart's point from the variant's plan; the baseline is never flagged", () => {
    const data = [
      series("1 device", 0, "step_ms", [1000, 100, 100, 100]),
      series("DataParallel x2", 0, "step_ms", [1000, 34, 35, 34]),
      series("DataParallel x3", 0, "step_ms", [1000, 60, 60, 60]),
    ];
    const plans = { "1 device": plan("cpu-emulated", 1), "DataParallel x2": plan("cpu-emulated", 2), "DataParallel x3": plan("cpu-emulated", 3) };
    const store = storeOf(data, plans);
    const chart = speedupChart(new RunIndex(store.run("e1")), store.run("e1")!.plans)!;
    assert.equal(chart.baseline.noise, null);
    const [x2, x3] = chart.points;
    assert.ok(x2!.speedup > 2.8);
    assert.match(x2!.noise ?? "", /2 cores/);
    assert.equal(x3!.noise, null);
    assert.equal(speedupChart(new RunIndex(store.run("e1")))!.points[0]!.noise, null, "without plans nothing is judged");
  });
});

describe("timing spread", () => {
  it("is min, median and max over the same steps as the mean (warm-up left out above 2 steps)", () => {
    const store = storeOf([series("1 device", 0, "step_ms", [500, 10, 14, 12, 8])]);
    const s = store.run("e1")!.series[0]!;
    assert.deepEqual(stepSpread(s), { min: 8, median: 11, max: 14, count: 4 });
    assert.equal(stepMean(s), 11);
    const short = storeOf([series("x", 0, "step_ms", [500, 10])]).run("e1")!.series[0]!;
    assert.deepEqual(stepSpread(short), { min: 10, median: 255, max: 500, count: 2 }, "two steps: nothing is left out, as for the mean");
    const bar = timingChart(new RunIndex(store.run("e1"))).bars[0]!;
    assert.equal(bar.spreadMetric, "step_ms");
    assert.deepEqual(bar.spread, { min: 8, median: 11, max: 14, count: 4 });
  });

  it("falls back to apply_ms for a replica that logs only its forward", () => {
    const store = storeOf([series("DataParallel x2", 0, "step_ms", [9, 9, 9]), series("DataParallel x2", 1, "apply_ms", [9, 3, 5])]);
    const bars = timingChart(new RunIndex(store.run("e1"))).bars;
    assert.equal(bars[1]!.spreadMetric, "apply_ms");
    assert.deepEqual(bars[1]!.spread, { min: 3, median: 4, max: 5, count: 2 });
  });
});

describe("loss small multiples", () => {
  it("keep one plot while scales are within 10×, split per variant beyond", () => {
    const near = storeOf([series("1 device", 0, "loss", [2, 1.5, 1]), series("DDP x2", 0, "loss", [8, 6, 5])]);
    const single = lossLayout(lossLines(near, "e1", []));
    assert.equal(single.panels.length, 1);
    assert.equal(single.reason, null);

    const far = storeOf([
      series("1 device", 0, "loss", [1.4, 1.2, 1.1]),
      series("DDP x2", 0, "loss", [15, 14, 13]),
      series("DDP x2", 1, "loss", [480, 470, 460]),
    ]);
    const layout = lossLayout(lossLines(far, "e1", []));
    assert.ok(layout.ratio > SCALE_SPLIT);
    assert.match(layout.reason ?? "", /more than 10×: one plot per variant/);
    assert.deepEqual(
      layout.panels.map((p) => [p.title, p.lines.map((l) => l.rank)]),
      [["1 device", [0]], ["DDP x2 · rank 0", [0]], ["DDP x2 · rank 1", [1]]],
      "a variant whose own ranks are 30× apart is split per rank too",
    );
  });
});

describe("line styles", () => {
  it("give every line of a run its own dash and marker, the first solid", () => {
    const styles = Array.from({ length: 6 }, (_, i) => lineStyle(i, false));
    assert.equal(styles[0]!.dash, null);
    assert.equal(new Set(styles.map((s) => s.dash)).size, 6);
    assert.equal(new Set(styles.map((s) => s.marker)).size, 6);
    assert.ok(styles.every((s) => s.dash !== lineStyle(0, true).dash), "unlike a compared run's dash");
  });

  it("put the markers of coinciding lines at different points", () => {
    const a = markerIndices(100, 0, 2);
    const b = markerIndices(100, 1, 2);
    assert.equal(a.length, 8);
    assert.equal(b.length, 8);
    assert.equal(a.filter((i) => b.includes(i)).length, 0);
    assert.deepEqual(markerIndices(3, 1, 2), [0, 1, 2], "fewer points than markers: each point (the shapes differ)");
    const store = storeOf([series("a", 0, "loss", [1, 2, 3]), series("b", 0, "loss", [1, 2, 3])]);
    const [la, lb] = lossLines(store, "e1", []);
    assert.notEqual(la!.dash, lb!.dash);
    assert.notEqual(la!.marker, lb!.marker);
  });
});

describe("untagged runs", () => {
  const cell = (id: string, kind: Cell["kind"], source: string, executionCount: number | null = null) => ({ id, kind, source, executionCount });

  it("are named after the heading above their cell, else their prompt, else their position", () => {
    const names = cellChartNames([
      cell("c1", "code", "x = 1", 4),
      cell("c2", "code", "y = 2"),
      cell("m1", "markdown", "# Intro\nText\n## Scaling `DataParallel` **sweep**\n```\n# not a heading\n```"),
      cell("c3", "code", "lab.log(...)", 7),
    ]);
    assert.equal(names.get("c1"), "cell [4]");
    assert.equal(names.get("c2"), "cell 2");
    assert.equal(names.get("c3"), "Scaling DataParallel sweep");
    assert.equal(names.has("m1"), false);
    assert.equal(lastHeading("no heading here"), null);
    assert.equal(lastHeading("### num_workers and [the loader](https://x)"), "num_workers and the loader");
  });

  it("carry that name in every chart's labels, never 'untagged'", () => {
    const store = storeOf([
      series("", 0, "loss", [3, 2, 1]),
      series("", 0, "step_ms", [9, 8, 7]),
      series("", 1, "step_ms", [9, 8, 70]),
      series("", 0, "memory_mib", [1, 1]),
    ]);
    assert.equal(untaggedRunName(null, syntheticSummary("e1", { executionCount: 3 })), "cell [3]");
    const model = panelAggregates(store, "e1", "Scaling sweep")!;
    const lines = lossLines(store, "e1", [], "Scaling sweep");
    const labels = [
      ...lines.map((l) => l.label),
      ...model.timing!.bars.map((b) => b.label),
      ...model.memory.flatMap((m) => m.chart.rows.map((r) => r.label)),
      ...model.stragglers!.map((s) => s.label),
    ];
    assert.ok(labels.length >= 5);
    for (const label of labels) {
      assert.match(label, /^Scaling sweep/);
      assert.doesNotMatch(label, /untagged/);
    }
  });
});

describe("valueAxisWidth", () => {
  it("keeps room beside the axis title for the widest tick label", () => {
    assert.equal(valueAxisWidth(["0", "5", "10"]), 56, "short labels keep the usual width");
    const wide = valueAxisWidth(niceTicks(0, 16_000).map(tickText));
    assert.ok(wide >= labelWidth("16,000") + 30, `16,000 fits beside the title (${wide} px)`);
    assert.ok(valueAxisWidth(["0.000123"]) > valueAxisWidth(["0.1"]));
  });
});
