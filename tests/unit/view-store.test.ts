/** The notebook page's store: who hears of a change, and when (at once for the user's actions, once per tick for a flood). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ViewStore } from "../../components/shell/model/view-store";

describe("ViewStore", () => {
  it("tells its listeners of an update at once, and stops telling one that unsubscribed", () => {
    const store = new ViewStore({ count: 0, name: "a" });
    const heard: number[] = [];
    const unsubscribe = store.subscribe(() => heard.push(store.getState().count));
    store.update({ count: 1 });
    assert.deepEqual(store.getState(), { count: 1, name: "a" });
    unsubscribe();
    store.update({ count: 2 });
    assert.deepEqual(heard, [1]);
  });

  it("gives a new state object on each change (React compares by identity), and replace tells nobody", () => {
    const store = new ViewStore({ count: 0 });
    const before = store.getState();
    let heard = 0;
    store.subscribe(() => heard++);
    store.replace({ count: 5 });
    assert.notEqual(store.getState(), before);
    assert.equal(store.getState().count, 5);
    assert.equal(heard, 0);
    store.emit();
    assert.equal(heard, 1);
  });

  it("comes to one notification for many emitSoon calls before the scheduled tick", () => {
    const ticks: Array<() => void> = [];
    const store = new ViewStore({ count: 0 }, (run) => ticks.push(run));
    let heard = 0;
    store.subscribe(() => heard++);
    for (let i = 1; i <= 100; i++) {
      store.replace({ count: i });
      store.emitSoon();
    }
    assert.equal(ticks.length, 1, "one tick scheduled");
    assert.equal(heard, 0, "nothing before the tick");
    ticks[0]?.();
    assert.equal(heard, 1);
    store.emitSoon();
    assert.equal(ticks.length, 2, "the next flood schedules again");
  });
});
