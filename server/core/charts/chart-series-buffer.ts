/**
 * One metric series as two growable Float64Arrays (NaN for a null value),
 * kept sorted by step with at most one value per step: a step seen twice
 * (stored and live) is counted once, and binary search over steps is valid.
 * Running sum/count/max are order-independent, so bar aggregations stay O(1)
 * per series however many points are appended live.
 */
import type { MetricSeriesKey } from "../protocol/metrics-model";
import { lowerBound } from "./chart-search";

export class SeriesBuffer {
  steps: Float64Array;
  values: Float64Array;
  length = 0;
  /** Sum, count and max of the finite values. */
  sum = 0;
  count = 0;
  max = -Infinity;
  /** Sum and count of the finite values after the first point (means that leave out a warm-up step), kept apart so no subtraction loses bits. */
  tailSum = 0;
  tailCount = 0;

  constructor(
    readonly key: MetricSeriesKey,
    capacity = 16,
  ) {
    this.steps = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
  }

  /** Adds a point unless its step is already held (the first value wins); returns whether it was added. */
  add(step: number, value: number | null): boolean {
    if (!Number.isFinite(step)) return false;
    const v = value === null || !Number.isFinite(value) ? NaN : value;
    const n = this.length;
    let at = n;
    if (n === 0 || step > this.steps[n - 1]!) {
      this.reserve(n + 1);
      this.steps[n] = step;
      this.values[n] = v;
    } else {
      const i = lowerBound(this.steps, n, step);
      at = i;
      if (this.steps[i] === step) return false;
      // The old first point stops being the warm-up step.
      if (i === 0) this.addToTail(this.values[0]!);
      this.reserve(n + 1);
      // Out-of-order arrivals are rare (a late rank, a refetch); shifting keeps the columns sorted.
      this.steps.copyWithin(i + 1, i, n);
      this.values.copyWithin(i + 1, i, n);
      this.steps[i] = step;
      this.values[i] = v;
    }
    this.length = n + 1;
    this.addToStats(v, at > 0);
    return true;
  }

  /** Adds many points; a sorted run into an empty buffer is one bulk copy (the usual stored load). */
  addMany(steps: ArrayLike<number>, values: ArrayLike<number | null>): number {
    const n = Math.min(steps.length, values.length);
    if (this.length === 0 && strictlyIncreasing(steps, n)) {
      this.reserve(n);
      for (let i = 0; i < n; i++) {
        const value = values[i];
        const v = value === null || value === undefined || !Number.isFinite(value) ? NaN : value;
        this.steps[i] = steps[i]!;
        this.values[i] = v;
        this.addToStats(v, i > 0);
      }
      this.length = n;
      return n;
    }
    let added = 0;
    for (let i = 0; i < n; i++) if (this.add(steps[i]!, values[i] ?? null)) added++;
    return added;
  }

  /** The value at `index` as the protocol spells it (null for a non-finite value). */
  valueAt(index: number): number | null {
    const v = this.values[index]!;
    return Number.isNaN(v) ? null : v;
  }

  private addToStats(v: number, inTail: boolean): void {
    if (Number.isNaN(v)) return;
    this.sum += v;
    this.count += 1;
    if (v > this.max) this.max = v;
    if (inTail) this.addToTail(v);
  }

  private addToTail(v: number): void {
    if (Number.isNaN(v)) return;
    this.tailSum += v;
    this.tailCount += 1;
  }

  private reserve(size: number): void {
    if (size <= this.steps.length) return;
    const capacity = Math.max(size, this.steps.length * 2);
    const steps = new Float64Array(capacity);
    const values = new Float64Array(capacity);
    steps.set(this.steps.subarray(0, this.length));
    values.set(this.values.subarray(0, this.length));
    this.steps = steps;
    this.values = values;
  }
}

function strictlyIncreasing(steps: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const s = steps[i]!;
    if (!Number.isFinite(s) || (i > 0 && s <= steps[i - 1]!)) return false;
  }
  return true;
}
