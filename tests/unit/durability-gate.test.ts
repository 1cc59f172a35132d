/**
 * The durability gate: nothing is released before the commit that follows it,
 * and settling events (a cell on its way) wait a few ms for company, so a
 * quick cell's states share one commit, while anything else commits at once.
 * Time is node:test's mock clock: "not yet" is checked, not slept on.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { DurabilityGate } from "../../server/notebook/durability-gate";

/** A writer that counts its commits and, each time, what had been released before it finished. */
function setup(settleMs = 3) {
  const released: string[] = [];
  const commits: string[][] = [];
  let held: string[] = [];
  const gate = new DurabilityGate<string>(
    async () => {
      const batch = held;
      held = [];
      await Promise.resolve();
      commits.push(batch);
    },
    (item) => released.push(item),
    settleMs,
  );
  const hold = (item: string, settles = false) => {
    held.push(item);
    gate.hold(item, settles);
  };
  return { gate, hold, released, commits };
}

/** Lets queued microtasks (the commit, its release) run. */
async function settleMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
}

describe("the durability gate", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());

  it("commits an ordinary event at once and releases it only after its commit", async () => {
    const { hold, released, commits } = setup();
    hold("output");
    assert.deepEqual(released, [], "nothing is visible before its commit");
    await settleMicrotasks();
    assert.deepEqual(commits, [["output"]]);
    assert.deepEqual(released, ["output"]);
  });

  it("keeps a settling event until its window has passed, then commits it alone", async () => {
    const { hold, released, commits } = setup(3);
    hold("queued", true);
    await settleMicrotasks();
    mock.timers.tick(2);
    await settleMicrotasks();
    assert.deepEqual(commits, [], "within the window nothing is committed");
    assert.deepEqual(released, []);
    mock.timers.tick(1);
    await settleMicrotasks();
    assert.deepEqual(commits, [["queued"]]);
    assert.deepEqual(released, ["queued"]);
  });

  it("commits settling events with the next ordinary one, in order, as one commit", async () => {
    const { hold, released, commits } = setup(3);
    hold("queued", true);
    hold("running", true);
    mock.timers.tick(1);
    hold("finished");
    await settleMicrotasks();
    assert.deepEqual(commits, [["queued", "running", "finished"]]);
    assert.deepEqual(released, ["queued", "running", "finished"]);
    mock.timers.tick(10);
    await settleMicrotasks();
    assert.equal(commits.length, 1, "the window's timer was cancelled: no empty commit after it");
  });

  it("settled() waits for the window without hurrying it; durable() commits now", async () => {
    const { gate, hold, commits } = setup(3);
    hold("queued", true);
    let settled = false;
    void gate.settled().then(() => (settled = true));
    await settleMicrotasks();
    assert.equal(settled, false);
    assert.deepEqual(commits, []);
    let durable = false;
    void gate.durable().then(() => (durable = true));
    await settleMicrotasks();
    assert.deepEqual(commits, [["queued"]]);
    assert.equal(durable, true);
    assert.equal(settled, true, "a waiter on the window is woken by the commit that came sooner");
  });

  it("with no window, every event commits at once", async () => {
    const { hold, commits } = setup(0);
    hold("queued", true);
    await settleMicrotasks();
    assert.deepEqual(commits, [["queued"]]);
  });

  it("close() releases nothing more but still wakes whoever waits on the window", async () => {
    const { gate, hold, released, commits } = setup(3);
    hold("queued", true);
    let settled = false;
    void gate.settled().then(() => (settled = true));
    gate.close();
    await settleMicrotasks();
    assert.equal(settled, true);
    assert.deepEqual(released, []);
    assert.equal(commits.length, 1);
  });
});
