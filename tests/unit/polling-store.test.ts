/** One polling store for every list page: loads, failures, stop, no two loads at once, and no stale answer over a fresher one. */
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { PollingStore, type LoadState } from "../../components/shell/model/polling-store";
import type { Refusal } from "../../server/core/protocol/op-table";

interface ItemsState extends LoadState {
  items: readonly string[];
}
type ItemsReply = { ok: true; items: string[] };

/** A server whose answers the test releases one by one. */
class HeldServer {
  readonly asked: Array<(answer: ItemsReply | Refusal) => void> = [];
  reconnect: (() => void) | null = null;

  fetch = (): Promise<ItemsReply | Refusal> => new Promise((resolve) => this.asked.push(resolve));

  async answer(index: number, answer: ItemsReply | Refusal): Promise<void> {
    this.asked[index]?.(answer);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }

  onConnect(listener: () => void): void {
    this.reconnect = listener;
  }
}

const items = (...names: string[]): ItemsReply => ({ ok: true, items: names });
const refused = (error: string): Refusal => ({ ok: false, error, code: "unavailable" });

function setup(pollMs?: number) {
  const server = new HeldServer();
  const store = new PollingStore<ItemsState, ItemsReply>({ status: "loading", error: null, items: [] }, { what: "Loading the items", fetch: server.fetch, apply: (reply) => ({ items: reply.items }), pollMs });
  return { server, store };
}

describe("PollingStore", () => {
  it("loads on refresh and shows the answer", async () => {
    const { server, store } = setup();
    const done = store.refresh();
    assert.equal(store.getState().status, "loading");
    await server.answer(0, items("a", "b"));
    await done;
    assert.deepEqual(store.getState(), { status: "ready", error: null, items: ["a", "b"] });
  });

  it("is in error when the first load fails; later a failure keeps what was shown, and a good load clears it", async () => {
    const { server, store } = setup();
    void store.refresh();
    await server.answer(0, refused("database away"));
    assert.deepEqual(store.getState(), { status: "error", error: "Loading the items failed: database away", items: [] });
    void store.refresh();
    await server.answer(1, items("a"));
    assert.deepEqual(store.getState(), { status: "ready", error: null, items: ["a"] });
    void store.refresh();
    await server.answer(2, refused("database away"));
    assert.deepEqual(store.getState(), { status: "ready", error: "Loading the items failed: database away", items: ["a"] });
    store.dismissError();
    assert.equal(store.getState().error, null);
  });

  it("never has two loads out: a refresh asked meanwhile runs once, after the first", async () => {
    const { server, store } = setup();
    void store.refresh();
    const second = store.refresh();
    const third = store.refresh();
    assert.equal(second, third, "coalesced");
    assert.equal(server.asked.length, 1);
    await server.answer(0, items("old"));
    assert.equal(server.asked.length, 2, "the follow-up went out after the first answer");
    await server.answer(1, items("new"));
    await second;
    assert.deepEqual(store.getState().items, ["new"]);
  });

  it("polls while started, skipping a tick while a load is out, and stops for good", async () => {
    // The poll's clock is node:test's mock: eight ticks pass at once, and "nothing happened" is checked, not slept on.
    mock.timers.enable({ apis: ["setInterval"] });
    try {
      const { server, store } = setup(5);
      store.start(server);
      assert.equal(server.asked.length, 1);
      mock.timers.tick(40);
      assert.equal(server.asked.length, 1, "ticks while the first load is out send nothing");
      await server.answer(0, items("a"));
      mock.timers.tick(5);
      assert.equal(server.asked.length, 2, "the next tick loads again");
      store.stop();
      await server.answer(1, items("after stop"));
      assert.deepEqual(store.getState().items, ["a"], "an answer after stop is for a page that is gone");
      const asked = server.asked.length;
      mock.timers.tick(40);
      assert.equal(server.asked.length, asked, "no tick after stop");
    } finally {
      mock.timers.reset();
    }
  });

  it("loads again after a reconnect", async () => {
    const { server, store } = setup();
    store.start(server);
    await server.answer(0, items("a"));
    server.reconnect?.();
    assert.equal(server.asked.length, 2);
    store.stop();
  });

  it("drops a load's answer when a fresher word came meanwhile (an action's own answer)", async () => {
    const { server, store } = setup();
    void store.refresh();
    store.supersede();
    store.update({ items: ["changed by an action"] });
    await server.answer(0, items("stale"));
    assert.deepEqual(store.getState().items, ["changed by an action"]);
  });
});
