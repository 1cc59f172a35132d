/**
 * A notebook's events leave as one batch per commit (server/socket/notebook-events.ts):
 * consecutive numbers share a packet, a new journal starts a new one, each
 * notebook has its own, and a batch goes out before whatever the commit's
 * waiters answer next.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { batchedBroadcast } from "../../server/socket/notebook-events";

const event = (cellId: string): NotebookEvent => ({ type: "cell-outputs-cleared", cellId });

function recorder() {
  const sent: Array<{ notebookId: string; firstSeq: number; cells: string[] }> = [];
  const broadcast = batchedBroadcast((notebookId, firstSeq, events) => sent.push({ notebookId, firstSeq, cells: events.map((each) => (each.type === "cell-outputs-cleared" ? each.cellId : "?")) }));
  return { sent, broadcast };
}

describe("notebook event batches", () => {
  it("events released together go out as one batch, in order, numbered from the first", async () => {
    const { sent, broadcast } = recorder();
    broadcast("n1", event("a"), 7);
    broadcast("n1", event("b"), 8);
    broadcast("n1", event("c"), 9);
    assert.deepEqual(sent, [], "nothing is sent before the release pass ends");
    await Promise.resolve();
    assert.deepEqual(sent, [{ notebookId: "n1", firstSeq: 7, cells: ["a", "b", "c"] }]);
    broadcast("n1", event("d"), 10);
    await Promise.resolve();
    assert.deepEqual(sent[1], { notebookId: "n1", firstSeq: 10, cells: ["d"] }, "the next commit is the next batch");
  });

  it("a break in the numbers (a new journal) starts a new batch; notebooks never share one", async () => {
    const { sent, broadcast } = recorder();
    broadcast("n1", event("a"), 3);
    broadcast("n2", event("x"), 1);
    broadcast("n1", event("b"), 1);
    broadcast("n1", event("c"), 2);
    await Promise.resolve();
    assert.deepEqual(sent, [
      { notebookId: "n1", firstSeq: 3, cells: ["a"] },
      { notebookId: "n1", firstSeq: 1, cells: ["b", "c"] },
      { notebookId: "n2", firstSeq: 1, cells: ["x"] },
    ]);
  });

  it("a batch goes out before an answer the same commit wakes (a joining viewer's snapshot comes after the events it skips)", async () => {
    const order: string[] = [];
    const broadcast = batchedBroadcast(() => order.push("events"));
    const committed = Promise.resolve();
    broadcast("n1", event("a"), 1);
    await committed.then(() => order.push("answer"));
    assert.deepEqual(order, ["events", "answer"]);
  });
});
