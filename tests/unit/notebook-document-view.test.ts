/** What the notebook page shows: the server's document with the user's unacknowledged changes on top, and when the page hears of it. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DocumentView } from "../../components/notebook/model/notebook-document-view";
import { initialViewState } from "../../components/notebook/model/notebook-view-state";
import { ViewStore } from "../../components/shell/model/view-store";
import { newCell } from "../../server/core/notebook/notebook-state";
import { MemoryTransport, testDoc } from "../helpers/notebook-pieces";

function setup() {
  const ticks: Array<() => void> = [];
  const store = new ViewStore(initialViewState({ status: "connected", socketId: "s" }, 0), (run) => ticks.push(run));
  const unsaved = new MemoryTransport();
  let heard = 0;
  store.subscribe(() => heard++);
  return { store, unsaved, view: new DocumentView(store, unsaved), ticks, heard: () => heard };
}

describe("DocumentView", () => {
  it("shows nothing before the first snapshot, then the server's document", () => {
    const { store, view } = setup();
    assert.equal(view.opened, false);
    view.event({ type: "notebook-renamed", title: "ignored" });
    assert.equal(store.getState().doc, null);
    view.snapshot(testDoc([newCell("a", "code", "x = 1")]));
    assert.equal(view.opened, true);
    assert.equal(view.serverSource("a"), "x = 1");
    assert.equal(store.getState().ui.selectedId, "a", "the selection lands on a cell");
  });

  it("replays unacknowledged changes on top, and counts them in the autosave indicator", () => {
    const { store, unsaved, view } = setup();
    view.snapshot(testDoc([newCell("a", "code", "x = 1")]));
    unsaved.editSource("a", "x = 2", "code", 0, "base");
    unsaved.sendStructural({ op: "insert-cell", notebookId: "nb", index: 1, cell: { id: "b", kind: "markdown", source: "" } });
    view.recompute();
    const state = store.getState();
    assert.deepEqual(state.doc?.cells.map((c) => [c.id, c.source]), [["a", "x = 2"], ["b", ""]]);
    assert.equal(view.serverSource("a"), "x = 1", "the server's own text stays the base");
    assert.equal(state.unsavedCells, 1);
    assert.deepEqual(state.save, { state: "saving" });
  });

  it("shows a flood of server events on the next tick, once", () => {
    const { store, view, ticks, heard } = setup();
    view.snapshot(testDoc([newCell("a")]));
    const before = heard();
    for (let i = 0; i < 50; i++) view.event({ type: "cell-stream", cellId: "a", name: "stdout", text: `${i}\n` });
    assert.equal(heard(), before, "nothing until the tick");
    assert.equal(ticks.length, 1);
    ticks[0]?.();
    assert.equal(heard(), before + 1);
    assert.equal(store.getState().doc?.cells[0]?.outputs.length, 1, "the stream came together");
  });

  it("takes the text a conflict reports as the server's newest word on the cell", () => {
    const { view } = setup();
    view.snapshot(testDoc([newCell("a", "code", "mine")]));
    view.conflict("a", "theirs");
    assert.equal(view.serverSource("a"), "theirs");
  });
});
