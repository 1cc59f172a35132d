/** Fractional indexes: order by plain string comparison, short keys, minimal rewrites. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assignKeys, isValidKey, keyBetween, keysBetween, MAX_KEY_LENGTH } from "../../server/persistence/fractional-index";

function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

describe("fractional index", () => {
  it("puts a key strictly between its neighbours", () => {
    assert.equal(keyBetween(null, null), "V");
    for (const [a, b] of [[null, "V"], ["V", null], ["V", "W"], ["0V", "1"], ["z", null], [null, "1"], ["a", "a0V"], ["Vzz", "W"]] as const) {
      const key = keyBetween(a, b);
      assert.ok(isValidKey(key), key);
      if (a !== null) assert.ok(a < key, `${a} < ${key}`);
      if (b !== null) assert.ok(key < b, `${key} < ${b}`);
    }
  });

  it("refuses keys out of order or malformed", () => {
    assert.throws(() => keyBetween("W", "V"), /not before/);
    assert.throws(() => keyBetween("V", "V"), /not before/);
    assert.throws(() => keyBetween("V0", null), /invalid/);
    assert.throws(() => keyBetween("a b", null), /invalid/);
  });

  it("appends and prepends with keys that grow by one character per ~30 edits", () => {
    let last: string | null = null;
    let first: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const after = keyBetween(last, null);
      assert.ok(last === null || last < after);
      last = after;
      const before = keyBetween(null, first ?? "V");
      assert.ok(before < (first ?? "V"));
      first = before;
    }
    assert.ok(last!.length <= 1000 / 30 + 2 && first!.length <= 1000 / 30 + 2, `${last} ${first}`);
  });

  it("keeps a random list of 3,000 inserts in order", () => {
    const rand = random(42);
    const keys: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const at = rand(keys.length + 1);
      keys.splice(at, 0, keyBetween(keys[at - 1] ?? null, keys[at] ?? null));
    }
    for (let i = 1; i < keys.length; i++) assert.ok(keys[i - 1]! < keys[i]!);
    assert.equal(new Set(keys).size, keys.length);
  });

  it("spreads n keys evenly and short", () => {
    const keys = keysBetween(null, null, 2000);
    assert.equal(keys.length, 2000);
    for (let i = 1; i < keys.length; i++) assert.ok(keys[i - 1]! < keys[i]!);
    assert.ok(Math.max(...keys.map((key) => key.length)) <= 3);
    const inner = keysBetween("A", "B", 10);
    assert.ok(inner.every((key) => key > "A" && key < "B"));
  });

  it("assignKeys reuses every key it can: one moved or inserted cell costs one key", () => {
    const ids = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const keys = keysBetween(null, null, ids.length);
    const current = new Map(ids.map((id, i) => [id, keys[i]!]));
    const changed = (order: string[]) => {
      const next = assignKeys(order, current);
      for (let i = 1; i < next.length; i++) assert.ok(next[i - 1]! < next[i]!);
      return order.filter((id, i) => current.get(id) !== next[i]);
    };
    assert.deepEqual(changed(ids), []);
    assert.deepEqual(changed(["new", ...ids]), ["new"]);
    assert.deepEqual(changed([...ids.slice(1), "c0"]), ["c0"]);
    assert.deepEqual(changed([...ids.slice(0, 50), "x", "y", ...ids.slice(50)]), ["x", "y"]);
    assert.equal(changed([...ids].reverse()).length, 99, "a reversal keeps one key");
  });

  it("assignKeys renumbers when keys would get too long", () => {
    const current = new Map([["a", "V"], ["b", "V" + "0".repeat(MAX_KEY_LENGTH) + "1"]]);
    const next = assignKeys(["a", "x", "b"], current);
    assert.ok(next[0]! < next[1]! && next[1]! < next[2]!);
    assert.ok(next.every((key) => key.length <= MAX_KEY_LENGTH));
  });
});
