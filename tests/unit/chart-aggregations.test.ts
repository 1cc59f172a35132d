/** The pure chart aggregations: per-device stacked step time, devices, speed-up, stragglers, loss lines, labels. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { differingParameters, runLegend } from "../../server/core/charts/chart-compare";
import { memoryChart, samplesChart, utilizationChart } from "../../server/core/charts/chart-devices";
import { lossLines } from "../../server/core/charts/chart-loss";
import { deviceNotice, MEMORY_NOTE_FALLBACK, memoryNote, panelAggregates } from "../../server/core/charts/chart-panel";
import { RunIndex } from "../../server/core/charts/chart-run-index";
import { speedupChart } from "../../server/core/charts/chart-speedup";
import { STRAGGLER_RULE, stragglers } from "../../server/core/charts/chart-stragglers";
import { syntheticSummary } from "../helpers/chart-synthetic";
import { timingChart } from "../../server/core/charts/chart-timing";
import { deviceCount, orderVariants, variantFamily } from "../../server/core/charts/chart-variants";
import { MetricStore } from "../../server/core/charts/metric-store";
import type { DevicePlan } from "../../server/core/protocol/kernel-messages";
import type { ExecutionSummary, MetricSeriesData } from "../../server/core/protocol/metrics-model";

/** A plan as mgpulab.plan.DevicePlan.to_dict() sends it. */
function plan(kind: DevicePlan["kind"], label: string, memorySource: string): DevicePlan {
  return {
    kind, engine: "DataParallel", count: 4, placement: "auto", gpus: kind === "cpu-emulated" ? 0 : 1, gpusUsed: kind === "cpu-emulated" ? 0 : 1,
    backend: null, hostCores: 16, devices: [], names: [], streams: kind === "cuda-shared", memorySource, label, reason: null,
  };
}

/** A series whose first (warm-up) step is 1000 ms, then the given values. */
function s(tag: string, rank: number, name: string, values: Array<number | null>, warmup: number | null = 1_000): MetricSeriesData {
  const all = warmup === null ? values : [warmup, ...values];
  return { tag, rank, name, steps: all.map((_, i) => i), values: all };
}

function indexOf(series: MetricSeriesData[], summary: Partial<ExecutionSummary> = {}, id = "e1"): { store: MetricStore; index: RunIndex } {
  const store = new MetricStore();
  store.load({ execution: syntheticSummary(id, summary), series });
  return { store, index: new RunIndex(store.run(id)) };
}

describe("variant tags", () => {
  it("read a device count from x<N>, ×<N> and <N> device(s), and a family without it", () => {
    assert.equal(deviceCount("DDP x4"), 4);
    assert.equal(deviceCount("DataParallel ×2"), 2);
    assert.equal(deviceCount("1 device"), 1);
    assert.equal(deviceCount("8 devices"), 8);
    assert.equal(deviceCount("ddp_x2"), 2);
    assert.equal(deviceCount("relax4"), null);
    assert.equal(deviceCount(""), null);
    assert.equal(variantFamily("DDP x4"), "DDP");
    assert.equal(variantFamily("1 device"), "");
    assert.deepEqual(orderVariants(["DDP x4", "zeta", "1 device", "DataParallel x4", "DDP x2"]), ["1 device", "DDP x2", "DDP x4", "DataParallel x4", "zeta"]);
  });
});

describe("timingChart", () => {
  it("gives one stacked bar per device per variant, warm-up step excluded, comm drawn inside backward", () => {
    const { index } = indexOf([
      s("DDP x2", 1, "forward_ms", [3, 5]),
      s("DDP x2", 0, "forward_ms", [2, 4]),
      s("DDP x2", 0, "backward_ms", [6, 6]),
      s("DDP x2", 0, "comm_ms", [2, 2]),
      s("DDP x2", 0, "step_ms", [12, 12]),
      s("1 device", 0, "data_ms", [1, 1]),
      s("1 device", 0, "optimizer_ms", [2, 4]),
    ]);
    const chart = timingChart(index);
    assert.deepEqual(
      chart.bars.map((b) => [b.tag, b.rank]),
      [["1 device", 0], ["DDP x2", 0], ["DDP x2", 1]],
    );
    const [single, rank0, rank1] = chart.bars;
    assert.deepEqual(single!.ms, { data: 1, forward: 0, apply: 0, backward: 0, comm: 0, optimizer: 3, other: 0 });
    // backward 6 of which comm 2 → 4 + 2; step 12 − (3 + 6) = 3 other.
    assert.deepEqual(rank0!.ms, { data: 0, forward: 3, apply: 0, backward: 4, comm: 2, optimizer: 0, other: 3 });
    assert.equal(rank0!.total, 12);
    assert.equal(rank1!.ms.forward, 4);
    assert.equal(rank0!.points, 8);
    assert.deepEqual(
      chart.phases.map((p) => p.key),
      ["data", "forward", "backward", "comm", "optimizer", "other"],
    );
  });

  it("keeps the first step when a series has only 2, and bars a DataParallel replica by its apply_ms", () => {
    const { index } = indexOf([s("1 device", 0, "forward_ms", [10], 20), s("DataParallel x2", 0, "forward_ms", [8, 8]), s("DataParallel x2", 1, "apply_ms", [5, 7])]);
    const bars = timingChart(index).bars;
    assert.equal(bars[0]!.ms.forward, 15);
    assert.equal(bars[2]!.ms.apply, 6);
    assert.equal(bars[1]!.ms.apply, 0, "device 0's apply is inside its forward");
  });
});

describe("per-device bars", () => {
  it("average samples per step and take peak memory per device, variants side by side", () => {
    const { index } = indexOf([
      s("DDP x2", 0, "samples", [32, 32]),
      s("DDP x2", 1, "samples", [32, 32]),
      s("1 device", 0, "samples", [64, 64]),
      s("DDP x2", 0, "memory_mib", [100, 120], 90),
      s("DDP x2", 1, "memory_peak_mib", [150, 140], null),
      s("DDP x2", 1, "memory_mib", [999, 999], null),
    ]);
    const samples = samplesChart(index)!;
    assert.deepEqual(samples.ranks, [0, 1]);
    assert.deepEqual(
      samples.rows.map((r) => [r.tag, r.values]),
      [["1 device", [64, null]], ["DDP x2", [32, 32]]],
    );
    const memory = memoryChart(index)!;
    assert.deepEqual(memory.rows[0]!.values, [120, 150]);
    assert.equal(memory.points, 5);
  });
});

describe("speedupChart", () => {
  it("divides the 1-device time per sample by the N-device one, and draws ideal up to the largest N", () => {
    const { index } = indexOf([
      s("1 device", 0, "step_ms", [100, 100]),
      s("1 device", 0, "samples", [64, 64]),
      ...[0, 1, 2, 3].flatMap((r) => [s("DDP x4", r, "step_ms", [40, 40]), s("DDP x4", r, "samples", [16, 16])]),
      s("DataParallel x2", 0, "step_ms", [80, 80]),
      s("DataParallel x2", 0, "samples", [32, 32]),
      s("DataParallel x2", 1, "samples", [32, 32]),
    ]);
    const chart = speedupChart(index)!;
    assert.equal(chart.basis, "sample");
    assert.equal(chart.baseline.tag, "1 device");
    assert.equal(chart.baseline.timeMs, 100 / 64);
    assert.deepEqual(
      chart.points.map((p) => [p.family, p.devices, p.speedup]),
      [["DDP", 4, 2.5], ["DataParallel", 2, 1.25]],
    );
    assert.equal(chart.maxDevices, 4);
    assert.deepEqual(chart.families, ["DDP", "DataParallel"]);
  });

  it("gives each speed-up the range its steps allow, warm-up left out", () => {
    const { index } = indexOf([
      // s() puts a slow warm-up step (1,000 ms) first: the range must not use it.
      s("1 device", 0, "step_ms", [100, 120, 110]),
      s("DDP x2", 0, "step_ms", [50, 80, 60]),
      s("DDP x2", 1, "step_ms", [55, 70, 65]),
    ]);
    const point = speedupChart(index)!.points[0]!;
    // Fastest one-device step 100 against the slowest two-device step 80; slowest 120 against fastest 50.
    assert.deepEqual(point.range, { low: 100 / 80, high: 120 / 50 });
    assert.ok(point.range!.low <= point.speedup && point.speedup <= point.range!.high);
  });

  it("falls back to time per step without samples, and is absent without a 1-device variant", () => {
    const withSteps = indexOf([s("1 device", 0, "step_ms", [90, 90]), s("DDP x2", 0, "step_ms", [60, 60]), s("DDP x2", 1, "step_ms", [60, 60])]);
    const chart = speedupChart(withSteps.index)!;
    assert.equal(chart.basis, "step");
    assert.equal(chart.points[0]!.speedup, 1.5);
    assert.equal(speedupChart(indexOf([s("DDP x2", 0, "step_ms", [60, 60]), s("DDP x4", 0, "step_ms", [60, 60])]).index), null);
  });
});

describe("stragglers", () => {
  it("flags a rank more than 25 % above its variant's median, not one at 20 %", () => {
    const { index } = indexOf([
      ...[10, 10, 10, 13].map((ms, r) => s("DDP x4", r, "step_ms", [ms, ms])),
      ...[10, 12].map((ms, r) => s("DDP x2", r, "step_ms", [ms, ms])),
      ...[10, 10, 12.5].map((ms, r) => s("DDP x3", r, "step_ms", [ms, ms])),
    ]);
    const flagged = stragglers(index);
    assert.deepEqual(
      flagged.map((f) => [f.tag, f.rank, f.metric]),
      [["DDP x4", 3, "step_ms"]],
    );
    assert.equal(flagged[0]!.medianMs, 10);
    assert.ok(Math.abs(flagged[0]!.excess - 0.3) < 1e-12);
    assert.match(STRAGGLER_RULE, /25 %/);
  });

  it("compares DataParallel replicas by apply_ms, warm-up excluded", () => {
    const { index } = indexOf([s("DataParallel x3", 0, "step_ms", [50, 50]), ...[5, 5, 9].map((ms, r) => s("DataParallel x3", r, "apply_ms", [ms, ms], 500))]);
    assert.deepEqual(
      stragglers(index).map((f) => [f.rank, f.metric, f.meanMs]),
      [[2, "apply_ms", 9]],
    );
  });
});

describe("loss lines and run labels", () => {
  it("draws a line per variant, per rank where ranks logged loss; compared runs are dashed and say how they differ", () => {
    const store = new MetricStore();
    store.load({
      execution: syntheticSummary("e1", { parameters: { lr: 0.1, batch: 64 }, deviceMode: "2× cpu (no CUDA)" }),
      series: [s("DDP x2", 1, "loss", [1]), s("DDP x2", 0, "loss", [1]), s("1 device", 0, "loss", [1]), s("1 device", 0, "step_ms", [1])],
    });
    store.load({
      execution: syntheticSummary("e2", { executionCount: 7, parameters: { lr: 0.5, batch: 64 }, deviceMode: "2× cuda" }),
      series: [s("DDP x2", 0, "loss", [1])],
    });
    const alone = lossLines(store, "e1", []);
    assert.deepEqual(
      alone.map((l) => [l.label, l.rank, l.dashed, l.faded]),
      [
        ["1 device", 0, false, false],
        ["DDP x2 · rank 0", 0, false, false],
        ["DDP x2 · rank 1", 1, false, true],
      ],
    );
    assert.equal(alone[1]!.color, alone[2]!.color, "a variant's ranks share its colour");
    assert.notEqual(alone[0]!.color, alone[1]!.color);
    const compared = lossLines(store, "e1", ["e2"]);
    assert.deepEqual(
      compared.map((l) => l.label),
      [
        "1 device — this run: lr=0.1, batch=64 · 2× cpu (no CUDA)",
        "DDP x2 · rank 0 — this run: lr=0.1, batch=64 · 2× cpu (no CUDA)",
        "DDP x2 · rank 1 — this run: lr=0.1, batch=64 · 2× cpu (no CUDA)",
        "DDP x2 — run [7]: lr=0.5 · 2× cuda",
      ],
    );
    assert.ok(compared[3]!.dashed);
    assert.notEqual(compared[3]!.color, compared[1]!.color);
  });

  it("lists every parameter when none differ", () => {
    const a = syntheticSummary("a", { executionCount: 2, parameters: { lr: 0.1 }, deviceMode: "cpu" });
    const b = syntheticSummary("b", { parameters: { lr: 0.1 } });
    assert.equal(differingParameters(a, b).size, 0);
    assert.equal(runLegend(a, b, false), "run [2]: lr=0.1 · cpu");
  });
});

describe("panelAggregates", () => {
  it("is null without series, and says plainly when devices are CPU-emulated", () => {
    assert.equal(panelAggregates(new MetricStore(), "e1"), null);
    const { store } = indexOf([s("", 0, "loss", [1])], { deviceMode: "4× cpu (emulated, no CUDA)" });
    const model = panelAggregates(store, "e1")!;
    assert.equal(model.device?.emulated, true);
    assert.match(model.device!.text, /CPU-emulated: 4× cpu \(emulated, no CUDA\)/);
    // Changed on purpose (issue 13): an untagged run is named after its cell, its prompt when the cell's name is not known.
    assert.equal(lossLines(store, "e1", [])[0]!.label, "cell [1]");
    assert.equal(lossLines(store, "e1", [], "Scaling sweep")[0]!.label, "Scaling sweep");
    assert.equal(model.stragglers, null);
    assert.equal(model.timing, null);
    assert.equal(deviceNotice("2× NVIDIA A100")?.emulated, false);
  });
});

describe("device plans in the panel", () => {
  const shared = plan("cuda-shared", "4 virtual devices on 1× H100 (streams), emulated DataParallel; 4 devices requested, this host has 1 GPU", "tracked tensor bytes per virtual device");
  const real = plan("cuda", "1× H100, CUDA", "torch.cuda.max_memory_allocated per device");

  it("names each variant with the plan that ran, and says when devices were not GPUs of their own", () => {
    const notice = deviceNotice("1× CUDA GPU", { "DataParallel x4": shared, "1 device": real })!;
    assert.equal(notice.emulated, true);
    assert.match(notice.text, /Virtual devices share a GPU/);
    assert.deepEqual(notice.variants, [
      { tag: "1 device", label: "1× H100, CUDA" },
      { tag: "DataParallel x4", label: shared.label },
    ]);
    const allReal = deviceNotice("1× CUDA GPU", { "1 device": real })!;
    assert.equal(allReal.emulated, false);
    assert.equal(allReal.text, "Devices: real GPUs, one per device.");
    assert.match(deviceNotice("", { x: plan("cpu-emulated", "2× cpu", "process RSS per rank") })!.text, /CPU-emulated/);
  });

  it("names a variant that reported no plan with the kernel's devices, so an emulated one never passes for a GPU", () => {
    const ddp = plan("cpu-emulated", "2× cpu, DDP over gloo", "process RSS per rank");
    const notice = deviceNotice("2× cpu (no CUDA)", { "DDP x2": ddp }, ["1 device", "DataParallel x2", "DDP x2"])!;
    assert.equal(notice.emulated, true);
    assert.deepEqual(notice.variants, [
      { tag: "DDP x2", label: ddp.label },
      { tag: "1 device", label: "no plan reported; it ran in this kernel: 2× cpu (no CUDA)" },
      { tag: "DataParallel x2", label: "no plan reported; it ran in this kernel: 2× cpu (no CUDA)" },
    ]);
    const onGpu = deviceNotice("1× CUDA GPU", { "1 device": real }, ["1 device", "mine"])!;
    assert.equal(onGpu.emulated, false);
    assert.match(onGpu.variants[1]!.label, /1× CUDA GPU/);
  });

  it("says what the memory bars measure, per variant when the variants measure different things", () => {
    assert.equal(memoryNote({}), MEMORY_NOTE_FALLBACK);
    assert.match(memoryNote({ a: real, b: real }), /: torch\.cuda\.max_memory_allocated per device\.$/);
    const mixed = memoryNote({ "DataParallel x4": shared, "1 device": real });
    assert.match(mixed, /different things: 1 device: torch\.cuda\.max_memory_allocated per device; DataParallel x4: tracked tensor bytes per virtual device\./);
  });

  it("takes live plans ahead of the stored summary, and charts GPU utilisation per GPU", () => {
    const { store } = indexOf([s("", 0, "gpu_util_pct", [40, 60]), s("", 1, "gpu_util_pct", [10, 30]), s("", 0, "loss", [1, 2])]);
    store.setPlan("e1", "DataParallel x4", shared);
    const model = panelAggregates(store, "e1")!;
    // The untagged series reported no plan: named with the kernel's devices (issue 13: an emulated run never passes for a GPU by saying nothing).
    assert.deepEqual(model.device?.variants.map((variant) => variant.tag), ["DataParallel x4", ""]);
    assert.deepEqual(utilizationChart(new RunIndex(store.run("e1")))?.rows[0]?.values, [50, 20], "the mean per GPU, warm-up excluded");
    assert.deepEqual(model.utilization?.ranks, [0, 1]);
    const before = store.getVersion();
    store.setPlan("e1", "DataParallel x4", shared);
    assert.equal(store.getVersion(), before, "the same plan again changes nothing");
  });
});

