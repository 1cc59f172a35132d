/** The metric store: typed columns, stored + live points counted once, versioned for React. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticSummary } from "../helpers/chart-synthetic";
import { MetricStore } from "../../server/core/charts/metric-store";
import type { ExecutionMetrics, MetricPointMessage } from "../../server/core/protocol/metrics-model";

const stored = (series: ExecutionMetrics["series"]): ExecutionMetrics => ({ execution: syntheticSummary("e1"), series });
const point = (step: number, values: Record<string, number | null>, rank = 0, tag = "DDP x2"): MetricPointMessage => ({ tag, rank, step, values });

function column(store: MetricStore, name: string, rank = 0, tag = "DDP x2") {
  const s = store.run("e1")?.series.find((b) => b.key.name === name && b.key.rank === rank && b.key.tag === tag);
  assert.ok(s, `series ${tag}/${rank}/${name}`);
  return { steps: [...s.steps.subarray(0, s.length)], values: Array.from({ length: s.length }, (_, i) => s.valueAt(i)), buffer: s };
}

describe("MetricStore", () => {
  it("loads stored series into typed columns, null as a gap", () => {
    const store = new MetricStore();
    store.load(stored([{ tag: "DDP x2", name: "loss", rank: 0, steps: [0, 1, 2], values: [2.5, null, 1.25] }]));
    const loss = column(store, "loss");
    assert.deepEqual(loss.steps, [0, 1, 2]);
    assert.deepEqual(loss.values, [2.5, null, 1.25]);
    assert.ok(loss.buffer.steps instanceof Float64Array);
    assert.ok(Number.isNaN(loss.buffer.values[1]));
    assert.equal(loss.buffer.count, 2);
    assert.equal(store.run("e1")?.summary?.executionId, "e1");
  });

  it("counts a (tag, rank, step, name) once when it arrives live and stored, in either order", () => {
    const liveFirst = new MetricStore();
    liveFirst.append("e1", [point(0, { loss: 2 }), point(1, { loss: 1.5, step_ms: 10 })]);
    liveFirst.load(stored([{ tag: "DDP x2", name: "loss", rank: 0, steps: [0, 1, 2], values: [2, 1.5, 1] }]));
    liveFirst.append("e1", [point(2, { loss: 1 }), point(3, { loss: 0.5 })]);
    assert.deepEqual(column(liveFirst, "loss").steps, [0, 1, 2, 3]);
    assert.deepEqual(column(liveFirst, "loss").values, [2, 1.5, 1, 0.5]);
    assert.deepEqual(column(liveFirst, "step_ms").steps, [1]);

    const storedFirst = new MetricStore();
    storedFirst.load(stored([{ tag: "DDP x2", name: "loss", rank: 0, steps: [0, 1, 2], values: [2, 1.5, 1] }]));
    assert.equal(storedFirst.append("e1", [point(1, { loss: 1.5 }), point(2, { loss: 1 })]), 0);
    assert.equal(column(storedFirst, "loss").buffer.count, 3);
  });

  it("keeps ranks, tags and names apart: only the full key dedupes", () => {
    const store = new MetricStore();
    store.append("e1", [point(5, { loss: 1, step_ms: 2 }, 0), point(5, { loss: 3 }, 1), point(5, { loss: 4 }, 0, "1 device")]);
    assert.deepEqual(column(store, "loss", 0).values, [1]);
    assert.deepEqual(column(store, "loss", 1).values, [3]);
    assert.deepEqual(column(store, "loss", 0, "1 device").values, [4]);
    assert.deepEqual(column(store, "step_ms", 0).values, [2]);
  });

  it("keeps steps sorted when a late point arrives out of order, and sorts and dedupes stored columns", () => {
    const store = new MetricStore();
    store.append("e1", [point(0, { loss: 3 }), point(2, { loss: 1 }), point(1, { loss: 2 }), point(2, { loss: 9 })]);
    assert.deepEqual(column(store, "loss").steps, [0, 1, 2]);
    assert.deepEqual(column(store, "loss").values, [3, 2, 1]);
    store.load(stored([{ tag: "DDP x2", name: "memory_mib", rank: 0, steps: [4, 3, 3, 5], values: [40, 30, 31, 50] }]));
    assert.deepEqual(column(store, "memory_mib").steps, [3, 4, 5]);
    assert.deepEqual(column(store, "memory_mib").values, [30, 40, 50]);
  });

  it("bumps its version and notifies only when something was added", () => {
    const store = new MetricStore();
    let calls = 0;
    const off = store.subscribe(() => calls++);
    store.append("e1", [point(0, { loss: 1 })]);
    const v = store.getVersion();
    store.append("e1", [point(0, { loss: 1 })]);
    assert.equal(store.getVersion(), v);
    assert.equal(calls, 1);
    off();
    store.append("e1", [point(1, { loss: 1 })]);
    assert.equal(calls, 1);
    assert.equal(store.getVersion(), v + 1);
  });

  it("grows to 10^5 live points in batches of 100 with strictly increasing steps", () => {
    const store = new MetricStore();
    for (let b = 0; b < 1_000; b++) store.append("e1", Array.from({ length: 100 }, (_, i) => point(b * 100 + i, { loss: i })));
    const { buffer } = column(store, "loss");
    assert.equal(buffer.length, 100_000);
    for (let i = 1; i < buffer.length; i++) assert.ok(buffer.steps[i]! > buffer.steps[i - 1]!);
    assert.equal(buffer.sum, 1_000 * 4_950);
  });

  it("drops the executions it is no longer asked to keep", () => {
    const store = new MetricStore();
    store.append("e1", [point(0, { loss: 1 })]);
    store.append("e2", [point(0, { loss: 1 })]);
    store.retain(new Set(["e2"]));
    assert.equal(store.run("e1"), undefined);
    assert.ok(store.run("e2"));
  });
});

describe("SeriesBuffer statistics", () => {
  it("keep the mean after the first step exact, also when a point arrives before the first", () => {
    const store = new MetricStore();
    store.append("e1", [point(1, { step_ms: 7 }), point(2, { step_ms: 1 / 7 }), point(3, { step_ms: null })]);
    const { buffer } = column(store, "step_ms");
    assert.equal(buffer.tailSum, 1 / 7);
    store.append("e1", [point(0, { step_ms: 1000 })]);
    assert.equal(buffer.tailSum, 1 / 7 + 7);
    assert.equal(buffer.tailCount, 2);
    assert.equal(buffer.count, 3);
    assert.equal(buffer.max, 1000);
  });
});
