/** The server's journal of a notebook's events: a reconnecting viewer gets exactly what it missed, or a snapshot. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EventJournal } from "../../server/notebook/event-journal";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";

const renamed = (title: string): NotebookEvent => ({ type: "notebook-renamed", title });
const streamed = (text: string): NotebookEvent => ({ type: "cell-stream", cellId: "c", name: "stdout", text });
const titles = (events: ReturnType<EventJournal["since"]>) => events?.map(({ seq, event }) => `${seq}:${event.type === "notebook-renamed" ? event.title : event.type}`);

describe("the server's event journal", () => {
  it("replays exactly the events after a position, and nothing at the current one", () => {
    const journal = new EventJournal();
    for (let i = 1; i <= 10; i++) assert.equal(journal.record(renamed(`t${i}`)), i);
    assert.deepEqual(titles(journal.since({ epoch: journal.epoch, seq: 7 })), ["8:t8", "9:t9", "10:t10"]);
    assert.deepEqual(journal.since(journal.position), []);
    assert.deepEqual(journal.position, { epoch: journal.epoch, seq: 10 });
  });

  it("answers another server's epoch or a position it never reached with a snapshot (null)", () => {
    const journal = new EventJournal();
    journal.record(renamed("a"));
    assert.equal(journal.since({ epoch: "another", seq: 0 }), null);
    assert.equal(journal.since({ epoch: journal.epoch, seq: 2 }), null);
  });

  it("keeps at most maxEvents: a position before them is a snapshot, one at their start replays them all", () => {
    const journal = new EventJournal({ maxEvents: 5, maxChars: 1 << 20 });
    for (let i = 1; i <= 12; i++) journal.record(renamed(`t${i}`));
    assert.deepEqual(titles(journal.since({ epoch: journal.epoch, seq: 7 })), ["8:t8", "9:t9", "10:t10", "11:t11", "12:t12"]);
    assert.equal(journal.since({ epoch: journal.epoch, seq: 6 }), null);
  });

  it("keeps at most maxChars of events, but always the newest one", () => {
    const journal = new EventJournal({ maxEvents: 100, maxChars: 1000 });
    journal.record(streamed("a".repeat(400)));
    journal.record(streamed("b".repeat(400)));
    journal.record(streamed("c".repeat(400)));
    assert.equal(journal.since({ epoch: journal.epoch, seq: 0 }), null, "the first fell out for the third");
    assert.deepEqual(journal.since({ epoch: journal.epoch, seq: 1 })?.map(({ seq }) => seq), [2, 3]);
    journal.record(streamed("d".repeat(5000)));
    assert.deepEqual(journal.since({ epoch: journal.epoch, seq: 3 })?.map(({ seq }) => seq), [4], "a single event over the bound is kept");
    assert.equal(journal.since({ epoch: journal.epoch, seq: 2 }), null);
  });

  it("stays exact through thousands of dropped events, at every point of its compaction", () => {
    const kept = 300;
    const journal = new EventJournal({ maxEvents: kept, maxChars: 1 << 30 });
    for (let seq = 1; seq <= 5000; seq++) {
      journal.record(renamed(`t${seq}`));
      if (seq % 97 !== 0 && seq < 4990) continue;
      const oldest = Math.max(1, seq - kept + 1);
      for (const from of [oldest - 2, oldest - 1, oldest, seq - 1]) {
        if (from < 0) continue;
        const replayed = journal.since({ epoch: journal.epoch, seq: from });
        if (from < oldest - 1) {
          assert.equal(replayed, null, `after ${seq}: from ${from} is gone (oldest kept ${oldest})`);
          continue;
        }
        assert.ok(replayed, `after ${seq}: from ${from} replays (oldest kept ${oldest})`);
        assert.equal(replayed.length, seq - from);
        assert.deepEqual([replayed[0]!.seq, replayed.at(-1)!.seq], [from + 1, seq]);
        assert.ok(replayed.every(({ seq: n, event }, i) => n === from + 1 + i && event.type === "notebook-renamed" && event.title === `t${n}`));
      }
    }
  });
});
