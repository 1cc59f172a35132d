/** Window downsampling keeps the shape within a point budget; hover reads the nearest real point. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SeriesBuffer } from "../../server/core/charts/chart-series-buffer";
import { seeded } from "../helpers/chart-synthetic";
import { downsampleIndices, nearestPoint, windowRange } from "../../server/core/charts/downsample";

function buffer(steps: number[], values: Array<number | null>): SeriesBuffer {
  const b = new SeriesBuffer({ tag: "", rank: 0, name: "loss" });
  b.addMany(steps, values);
  return b;
}

function noisy(n: number): SeriesBuffer {
  const random = seeded(3);
  return buffer(
    Array.from({ length: n }, (_, i) => i * 2),
    Array.from({ length: n }, () => random()),
  );
}

function argExtreme(b: SeriesBuffer, lo: number, hi: number, better: (a: number, c: number) => boolean): number {
  let best = lo;
  for (let i = lo; i < hi; i++) if (better(b.values[i]!, b.values[best]!)) best = i;
  return best;
}

describe("downsampleIndices", () => {
  it("returns every point when the window fits the budget", () => {
    const b = noisy(50);
    assert.deepEqual([...downsampleIndices(b, null, 100)], Array.from({ length: 50 }, (_, i) => i));
  });

  it("respects the budget and keeps the window's first, last, minimum and maximum", () => {
    const b = noisy(100_000);
    b.values[77_777] = 5; // a spike
    b.values[12_345] = -5; // a dip
    for (const budget of [10, 501, 1_200]) {
      const out = [...downsampleIndices(b, null, budget)];
      assert.ok(out.length <= budget, `${out.length} ≤ ${budget}`);
      assert.ok(out.length >= budget - 2, "uses the budget");
      assert.equal(out[0], 0);
      assert.equal(out.at(-1), b.length - 1);
      assert.ok(out.includes(77_777) && out.includes(12_345));
      for (let i = 1; i < out.length; i++) assert.ok(out[i]! > out[i - 1]!, "ascending, no repeats");
    }
  });

  it("samples only inside the window, and keeps the window's own extremes", () => {
    const b = noisy(100_000);
    const window = { x0: 40_001, x1: 60_000 };
    const { lo, hi } = windowRange(b, window);
    assert.equal(b.steps[lo], 40_002);
    assert.equal(b.steps[hi - 1], 60_000);
    const out = [...downsampleIndices(b, window, 300)];
    assert.ok(out.length <= 300);
    for (const i of out) assert.ok(b.steps[i]! >= window.x0 && b.steps[i]! <= window.x1);
    assert.equal(out[0], lo);
    assert.equal(out.at(-1), hi - 1);
    assert.ok(out.includes(argExtreme(b, lo, hi, (a, c) => a > c)));
    assert.ok(out.includes(argExtreme(b, lo, hi, (a, c) => a < c)));
  });

  it("keeps a gap where a whole bucket is non-finite", () => {
    const values = Array.from({ length: 1_000 }, (_, i) => (i >= 400 && i < 600 ? null : i));
    const b = buffer(Array.from({ length: 1_000 }, (_, i) => i), values);
    const out = [...downsampleIndices(b, null, 20)];
    assert.ok(out.some((i) => Number.isNaN(b.values[i]!)));
  });
});

describe("nearestPoint", () => {
  const b = buffer([0, 10, 20, 30], [0.123456789012345, null, 2.5, 3.75]);

  it("finds the exact point, the nearer neighbour, or the earlier one on a tie", () => {
    assert.deepEqual(nearestPoint(b, 20), { index: 2, step: 20, value: 2.5 });
    assert.deepEqual(nearestPoint(b, 26), { index: 3, step: 30, value: 3.75 });
    assert.deepEqual(nearestPoint(b, 25), { index: 2, step: 20, value: 2.5 });
    assert.deepEqual(nearestPoint(b, 4), { index: 0, step: 0, value: 0.123456789012345 });
  });

  it("clamps to the ends, says null for a non-finite value, and null for an empty series", () => {
    assert.equal(nearestPoint(b, -100)?.index, 0);
    assert.equal(nearestPoint(b, 1e9)?.index, 3);
    assert.deepEqual(nearestPoint(b, 11), { index: 1, step: 10, value: null });
    assert.equal(nearestPoint(buffer([], []), 3), null);
  });

  it("reads the full data, not a downsampled view of it", () => {
    const big = noisy(100_000);
    const shown = new Set(downsampleIndices(big, null, 100));
    const hidden = [...Array(1_000).keys()].map((k) => 500 + k * 97).find((i) => !shown.has(i))!;
    const hit = nearestPoint(big, big.steps[hidden]!);
    assert.equal(hit?.index, hidden);
    assert.equal(hit?.value, big.values[hidden]);
  });
});
