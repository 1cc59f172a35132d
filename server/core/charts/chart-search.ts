/** Binary searches over the sorted step column of a series (the first `length` entries only). */

/** First index whose step is ≥ x (`length` when none is). */
export function lowerBound(steps: Float64Array, length: number, x: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (steps[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose step is > x (`length` when none is). */
export function upperBound(steps: Float64Array, length: number, x: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (steps[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
