/** Filling the store from fetch and live feed, frame-throttled versions, and the zoom reducer. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FetchResult } from "../../components/charts/model/chart-fetch";
import { FrameThrottledVersion, trailingDelay, type FrameScheduler } from "../../components/charts/model/chart-frame";
import { MetricSync } from "../../components/charts/model/chart-sync";
import { syntheticSummary } from "../helpers/chart-synthetic";
import { NO_ZOOM, zoomReducer } from "../../components/charts/model/chart-zoom";
import { MetricStore, type MetricFeed } from "../../server/core/charts/metric-store";
import type { ExecutionMetrics, MetricPointMessage } from "../../server/core/protocol/metrics-model";

class TestFeed implements MetricFeed {
  private listeners = new Set<(executionId: string, points: MetricPointMessage[]) => void>();
  subscribe(listener: (executionId: string, points: MetricPointMessage[]) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  push(executionId: string, steps: number[], rank = 0): void {
    for (const l of this.listeners) l(executionId, steps.map((step) => ({ tag: "", rank, step, values: { loss: step / 10 } })));
  }
  get size() {
    return this.listeners.size;
  }
}

/** A fetch whose answers the test releases, one per call, in order. */
class GatedFetch {
  calls: string[] = [];
  private gates: Array<(result: FetchResult<ExecutionMetrics>) => void> = [];
  readonly fetch = (executionId: string) => {
    this.calls.push(executionId);
    return new Promise<FetchResult<ExecutionMetrics>>((resolve) => this.gates.push(resolve));
  };
  release(index: number, steps: number[], executionId = this.calls[index]!): void {
    this.gates[index]!({
      ok: true,
      data: { execution: syntheticSummary(executionId), series: [{ tag: "", name: "loss", rank: 0, steps, values: steps.map((s) => s / 10) }] },
    });
  }
  fail(index: number): void {
    this.gates[index]!({ ok: false, status: 404, error: "the server answered 404 Not Found" });
  }
}

const lossSteps = (store: MetricStore, id: string): number[] => {
  const s = store.run(id)?.series.find((b) => b.key.name === "loss");
  return s ? [...s.steps.subarray(0, s.length)] : [];
};

describe("MetricSync", () => {
  it("appends live points of the shown execution while its fetch is in flight, then merges the fetch without double counting", async () => {
    const store = new MetricStore();
    const feed = new TestFeed();
    const fetch = new GatedFetch();
    const sync = new MetricSync(store, fetch.fetch);
    sync.listen(feed);
    const shown = sync.show("e1", true);
    feed.push("e1", [3, 4]);
    feed.push("other", [99]);
    fetch.release(0, [0, 1, 2, 3]);
    await shown;
    feed.push("e1", [4, 5]);
    assert.deepEqual(lossSteps(store, "e1"), [0, 1, 2, 3, 4, 5]);
    assert.equal(store.run("other"), undefined);
    assert.equal(store.run("e1")?.series[0]?.count, 6);
  });

  it("refetches when the run ends and when the execution changes, dropping the old run and stale answers", async () => {
    const store = new MetricStore();
    const fetch = new GatedFetch();
    const sync = new MetricSync(store, fetch.fetch);
    const first = sync.show("e1", true);
    fetch.release(0, [0, 1]);
    await first;
    const ended = sync.show("e1", false);
    fetch.release(1, [0, 1, 2]);
    await ended;
    assert.deepEqual(fetch.calls, ["e1", "e1"]);
    assert.deepEqual(lossSteps(store, "e1"), [0, 1, 2]);
    await sync.show("e1", false);
    assert.equal(fetch.calls.length, 2, "no refetch without a change");

    const toE2 = sync.show("e2", true);
    const toE3 = sync.show("e3", true);
    fetch.release(2, [7]);
    fetch.release(3, [8]);
    await Promise.all([toE2, toE3]);
    assert.equal(store.run("e1"), undefined);
    assert.equal(store.run("e2"), undefined, "an answer for a run no longer shown is dropped");
    assert.deepEqual(lossSteps(store, "e3"), [8]);
  });

  it("refetches the shown run when the feed says the connection resynced from a snapshot", async () => {
    const store = new MetricStore();
    const fetch = new GatedFetch();
    const sync = new MetricSync(store, fetch.fetch);
    let resync: (() => void) | null = null;
    const feed: MetricFeed = {
      subscribe: () => () => undefined,
      subscribeResync: (listener) => {
        resync = listener;
        return () => {
          resync = null;
        };
      },
    };
    const stop = sync.listen(feed);
    const shown = sync.show("e1", true);
    fetch.release(0, [0, 1]);
    await shown;
    resync!();
    assert.deepEqual(fetch.calls, ["e1", "e1"], "the resync asked for the run again");
    const direct = sync.resync();
    fetch.release(1, [0, 1, 2, 3]);
    fetch.release(2, [0, 1, 2, 3]);
    await direct;
    assert.deepEqual(lossSteps(store, "e1"), [0, 1, 2, 3], "points missed while disconnected are back");
    stop();
    assert.equal(resync, null, "unsubscribed with the feed");
  });

  it("loads compared runs once and reports those that failed", async () => {
    const store = new MetricStore();
    const fetch = new GatedFetch();
    const sync = new MetricSync(store, fetch.fetch);
    const shown = sync.show("e1", false);
    fetch.release(0, [0]);
    await shown;
    const compared = sync.compare(["e2", "e3"]);
    fetch.release(1, [0, 1]);
    fetch.fail(2);
    const errors = await compared;
    assert.deepEqual([...errors.keys()], ["e3"]);
    assert.deepEqual(lossSteps(store, "e2"), [0, 1]);
    await sync.compare(["e2"]);
    assert.equal(fetch.calls.length, 3, "a held run is not fetched again");
    await sync.compare([]);
    assert.equal(store.run("e2"), undefined);
    assert.ok(store.run("e1"));
  });

  it("stops appending once the feed listener is removed", () => {
    const store = new MetricStore();
    const feed = new TestFeed();
    const sync = new MetricSync(store, new GatedFetch().fetch);
    void sync.show("e1", true);
    const off = sync.listen(feed);
    off();
    feed.push("e1", [1]);
    assert.equal(feed.size, 0);
    assert.equal(store.run("e1")?.series.length ?? 0, 0);
  });
});

class ManualFrames implements FrameScheduler {
  callbacks = new Map<number, () => void>();
  private next = 1;
  request(callback: () => void): number {
    this.callbacks.set(this.next, callback);
    return this.next++;
  }
  cancel(handle: number): void {
    this.callbacks.delete(handle);
  }
  run(): void {
    const due = [...this.callbacks.values()];
    this.callbacks.clear();
    for (const callback of due) callback();
  }
}

describe("FrameThrottledVersion", () => {
  it("publishes many store changes as one version per frame", () => {
    const store = new MetricStore();
    const frames = new ManualFrames();
    const throttled = new FrameThrottledVersion(store, frames);
    let renders = 0;
    const off = throttled.subscribe(() => renders++);
    for (let i = 0; i < 100; i++) store.append("e1", [{ tag: "", rank: 0, step: i, values: { loss: i } }]);
    assert.equal(renders, 0);
    assert.equal(throttled.getVersion(), 0);
    assert.equal(frames.callbacks.size, 1);
    frames.run();
    assert.equal(renders, 1);
    assert.equal(throttled.getVersion(), store.getVersion());
    store.append("e1", [{ tag: "", rank: 0, step: 1_000, values: { loss: 1 } }]);
    throttled.flush();
    assert.equal(renders, 2);
    assert.equal(frames.callbacks.size, 0);
    store.append("e1", [{ tag: "", rank: 0, step: 1_001, values: { loss: 1 } }]);
    off();
    assert.equal(frames.callbacks.size, 0, "the last unsubscribe cancels the pending frame");
  });
});

describe("trailingDelay", () => {
  it("publishes at once after a quiet interval, else when the interval since the last publication ends", () => {
    assert.equal(trailingDelay(5_000, -Infinity, 1_000), 0);
    assert.equal(trailingDelay(5_000, 3_000, 1_000), 0);
    assert.equal(trailingDelay(5_000, 4_600, 1_000), 600);
  });
});

describe("zoomReducer", () => {
  it("zooms to a dragged range either way, ignores a click, and resets", () => {
    let state = zoomReducer(NO_ZOOM, { type: "start", x: 80 });
    state = zoomReducer(state, { type: "move", x: 20 });
    assert.deepEqual(state.drag, { from: 80, to: 20 });
    state = zoomReducer(state, { type: "end" });
    assert.deepEqual(state, { window: { x0: 20, x1: 80 }, drag: null });
    const clicked = zoomReducer(zoomReducer(state, { type: "start", x: 50 }), { type: "end" });
    assert.deepEqual(clicked.window, { x0: 20, x1: 80 });
    assert.equal(zoomReducer(state, { type: "reset" }), NO_ZOOM);
    assert.equal(zoomReducer(NO_ZOOM, { type: "move", x: 3 }), NO_ZOOM);
  });
});
