/** Live metric points and device plans go to their cell's charts only, never through the document. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CellMetricFeeds } from "../../components/notebook/model/cell-metric-feeds";

import type { DevicePlan } from "../../server/core/protocol/kernel-messages";

const plan: DevicePlan = {
  kind: "cpu-emulated",
  engine: "DDP",
  count: 2,
  placement: "cpu",
  gpus: 0,
  gpusUsed: 0,
  backend: "gloo",
  hostCores: 2,
  devices: ["cpu", "cpu"],
  names: ["cpu", "cpu"],
  streams: false,
  memorySource: "rss",
  label: "2× cpu",
  reason: null,
};

describe("CellMetricFeeds", () => {
  it("hands a cell's points and plans to that cell's listeners only", () => {
    const feeds = new CellMetricFeeds();
    const a: string[] = [];
    const b: string[] = [];
    feeds.feed("a").subscribe((executionId, points) => a.push(`${executionId}:${points.length}`));
    feeds.feed("b").subscribe((executionId) => b.push(executionId));
    feeds.feed("a").subscribePlans((executionId, tag) => a.push(`plan ${executionId} ${tag}`));
    assert.equal(feeds.deliver({ type: "cell-metric-points", cellId: "a", executionId: "e1", points: [] }), true);
    assert.equal(feeds.deliver({ type: "cell-device-plan", cellId: "a", executionId: "e1", tag: "ddp", plan: { ...plan } }), true);
    assert.deepEqual(a, ["e1:0", "plan e1 ddp"]);
    assert.deepEqual(b, []);
  });

  it("leaves every other event to the document", () => {
    const feeds = new CellMetricFeeds();
    assert.equal(feeds.deliver({ type: "notebook-renamed", title: "t" }), false);
  });

  it("gives the same feed object per cell, tells every chart of a resync, and forgets an unsubscribed listener", () => {
    const feeds = new CellMetricFeeds();
    assert.equal(feeds.feed("a"), feeds.feed("a"));
    let resyncs = 0;
    const stop = feeds.feed("a").subscribeResync(() => resyncs++);
    feeds.feed("b").subscribeResync(() => resyncs++);
    feeds.resynced();
    assert.equal(resyncs, 2);
    stop();
    feeds.resynced();
    assert.equal(resyncs, 3);
    let points = 0;
    const unsubscribe = feeds.feed("a").subscribe(() => points++);
    unsubscribe();
    feeds.deliver({ type: "cell-metric-points", cellId: "a", executionId: "e", points: [] });
    assert.equal(points, 0);
  });
});
