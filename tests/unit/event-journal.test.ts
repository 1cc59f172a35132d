/** Events applied strictly in the server's journal order: duplicates skipped, a gap re-opens, events held while an open waits. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EventJournal } from "../../components/notebook/model/event-journal";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";

const renamed = (title: string): NotebookEvent => ({ type: "notebook-renamed", title });

function setup() {
  const applied: string[] = [];
  let gaps = 0;
  const journal = new EventJournal(
    (event) => applied.push(event.type === "notebook-renamed" ? event.title : event.type),
    () => gaps++,
  );
  return { journal, applied, gaps: () => gaps };
}

describe("EventJournal", () => {
  it("applies the next event, skips what the snapshot already holds, and reports a gap without applying", () => {
    const { journal, applied, gaps } = setup();
    journal.position = { epoch: "e", seq: 5 };
    journal.receive(4, [renamed("old"), renamed("also old"), renamed("six")], true);
    assert.deepEqual(applied, ["six"]);
    assert.deepEqual(journal.position, { epoch: "e", seq: 6 });
    journal.take(8, renamed("eight"));
    assert.deepEqual(applied, ["six"]);
    assert.equal(gaps(), 1);
    assert.equal(journal.position.seq, 6, "a gap leaves the position where it was");
  });

  it("applies everything as it comes without a position", () => {
    const { journal, applied } = setup();
    journal.take(3, renamed("a"));
    journal.take(1, renamed("b"));
    assert.deepEqual(applied, ["a", "b"]);
  });

  it("holds events while an open waits, applies them after it, and drops them for a newer open", () => {
    const { journal, applied } = setup();
    journal.receive(1, [renamed("held")], false);
    journal.dropHeld();
    journal.receive(2, [renamed("kept")], false);
    assert.deepEqual(applied, []);
    journal.position = { epoch: "e", seq: 1 };
    journal.releaseHeld();
    journal.releaseHeld();
    assert.deepEqual(applied, ["kept"]);
  });
});
