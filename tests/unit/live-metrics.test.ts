/** A cell's compact live view: the latest value of each metric per rank, ranks in order, every point counted. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mergeLiveMetrics } from "../../server/notebook/live-metrics";

describe("live metrics", () => {
  it("keeps the latest value of each metric per rank, in rank order, and counts every point", () => {
    let live = mergeLiveMetrics(null, { rank: 1, step: 3, values: { loss: 0.9 } });
    live = mergeLiveMetrics(live, { rank: 0, step: 3, values: { loss: 1.1, ms: 4 } });
    live = mergeLiveMetrics(live, { rank: 0, step: 4, values: { loss: 1.0 } });
    assert.deepEqual(live, {
      points: 3,
      ranks: [
        { rank: 0, step: 4, values: { loss: 1.0, ms: 4 } },
        { rank: 1, step: 3, values: { loss: 0.9 } },
      ],
    });
  });

  it("never moves a rank's step back for a late point, and does not change the view it was given", () => {
    const before = mergeLiveMetrics(null, { rank: 0, step: 9, values: { loss: 0.5 } });
    const after = mergeLiveMetrics(before, { rank: 0, step: 2, values: { loss: 0.7 } });
    assert.deepEqual(after.ranks, [{ rank: 0, step: 9, values: { loss: 0.7 } }]);
    assert.deepEqual(before.ranks, [{ rank: 0, step: 9, values: { loss: 0.5 } }], "a new view each time");
  });
});
