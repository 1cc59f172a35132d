/**
 * Fractional indexes: cell order as strings, so inserting or moving a cell
 * writes one row. A key is a base-62 fraction 0.d1d2d3… written with digits in
 * ASCII order ("0-9A-Za-z") and never ending in "0", so plain code-unit
 * comparison of keys is numeric comparison. Pure functions.
 *
 * Appending at the end grows keys by one character every ~31 appends (there
 * is no integer part, unlike rocicorp's fractional-indexing); the repository
 * renumbers a notebook's cells when a key passes MAX_KEY_LENGTH, so that
 * costs one full rewrite every few hundred appends.
 */
const DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE = DIGITS.length;
const KEY_PATTERN = /^[0-9A-Za-z]*[1-9A-Za-z]$/;

/** Past this length the whole list is renumbered (keeps keys short after many inserts at one spot). */
export const MAX_KEY_LENGTH = 24;

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function digit(char: string | undefined): number {
  return char === undefined ? 0 : DIGITS.indexOf(char);
}

/** A key strictly between `a` ("" = 0) and `b` (null = 1); requires a < b. */
function midpoint(a: string, b: string | null): string {
  if (b !== null) {
    let n = 0;
    while ((a[n] ?? "0") === b[n]) n++;
    if (n > 0) return b.slice(0, n) + midpoint(a.slice(n), b.slice(n));
  }
  const low = digit(a[0]);
  const high = b !== null ? digit(b[0]) : BASE;
  if (high - low > 1) return DIGITS[Math.round((low + high) / 2)]!;
  if (b !== null && b.length > 1) return b.slice(0, 1);
  return DIGITS[low]! + midpoint(a.slice(1), null);
}

/** The shortest key after `a`: bump the first digit that can be bumped. */
function keyAfter(a: string): string {
  for (let i = 0; i < a.length; i++) {
    const d = digit(a[i]);
    if (d < BASE - 1) return a.slice(0, i) + DIGITS[d + 1];
  }
  return midpoint(a, null);
}

/** The shortest key before `b`: lower the first digit that can be lowered without ending in "0". */
function keyBefore(b: string): string {
  for (let i = 0; i < b.length; i++) {
    const d = digit(b[i]);
    if (d > 1) return b.slice(0, i) + DIGITS[d - 1];
  }
  return midpoint("", b);
}

function checkBounds(a: string | null, b: string | null): void {
  if (a !== null && !isValidKey(a)) throw new Error(`invalid fractional index ${JSON.stringify(a)}`);
  if (b !== null && !isValidKey(b)) throw new Error(`invalid fractional index ${JSON.stringify(b)}`);
  if (a !== null && b !== null && a >= b) throw new Error(`fractional index ${a} is not before ${b}`);
}

/** A key between `a` and `b` (null: open end). Throws unless a < b. */
export function keyBetween(a: string | null, b: string | null): string {
  checkBounds(a, b);
  if (a === null) return b === null ? "V" : keyBefore(b);
  if (b === null) return keyAfter(a);
  return midpoint(a, b);
}

/** `count` increasing keys between `a` and `b`, spread by bisection so they stay short. */
export function keysBetween(a: string | null, b: string | null, count: number): string[] {
  if (count <= 0) return [];
  if (count === 1) return [keyBetween(a, b)];
  const middle = Math.floor(count / 2);
  checkBounds(a, b);
  // The true middle (keyBetween would hug a bound when one end is open).
  const key = midpoint(a ?? "", b);
  return [...keysBetween(a, key, middle), key, ...keysBetween(key, b, count - middle - 1)];
}

/**
 * Keys for `order` (ids in their new order), reusing `current` keys where
 * they already ascend: the longest increasing run of existing keys is kept,
 * everything else gets a new key between its kept neighbours. Returns a key
 * for every id; when some key would grow past MAX_KEY_LENGTH, all are renumbered.
 */
export function assignKeys(order: readonly string[], current: ReadonlyMap<string, string>): string[] {
  const kept = longestIncreasing(order.map((id) => current.get(id) ?? null));
  const keys: string[] = new Array<string>(order.length);
  let index = 0;
  while (index < order.length) {
    if (kept.has(index)) {
      keys[index] = current.get(order[index]!)!;
      index++;
      continue;
    }
    const start = index;
    while (index < order.length && !kept.has(index)) index++;
    const before = start > 0 ? keys[start - 1]! : null;
    const after = index < order.length ? current.get(order[index]!)! : null;
    keysBetween(before, after, index - start).forEach((key, offset) => (keys[start + offset] = key));
  }
  return keys.some((key) => key.length > MAX_KEY_LENGTH) ? keysBetween(null, null, order.length) : keys;
}

/** Indices of a longest strictly increasing subsequence of the non-null keys (patience sorting). */
function longestIncreasing(keys: ReadonlyArray<string | null>): Set<number> {
  const tails: number[] = [];
  const previous = new Array<number>(keys.length).fill(-1);
  keys.forEach((key, index) => {
    if (key === null || !isValidKey(key)) return;
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (keys[tails[mid]!]! < key) low = mid + 1;
      else high = mid;
    }
    if (low > 0) previous[index] = tails[low - 1]!;
    tails[low] = index;
  });
  const result = new Set<number>();
  for (let index = tails.length > 0 ? tails[tails.length - 1]! : -1; index !== -1; index = previous[index]!) result.add(index);
  return result;
}
