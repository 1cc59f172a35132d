/** Keys and palette commands become intents, unless this viewer may not do one; the selection and panels. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { actionNeed, NotebookKeys, type KeyIntents } from "../../components/notebook/model/notebook-keys";
import { notebookPieces } from "../helpers/notebook-pieces";

function setup(access: NotebookAccessLevel) {
  const pieces = notebookPieces(access);
  const did: string[] = [];
  const intents: KeyIntents = {
    runCells: (cellIds) => did.push(`run ${cellIds.join(",")}`),
    insertCell: (index, kind) => did.push(`insert ${index} ${kind}`),
    deleteCell: (cellId) => did.push(`delete ${cellId}`),
    undoDelete: () => did.push("undo-delete"),
    setKind: (cellId, kind) => did.push(`kind ${cellId} ${kind}`),
    interrupt: () => did.push("interrupt"),
    requestRestart: () => did.push("restart"),
  };
  return { ...pieces, did, keys: new NotebookKeys(pieces.store, pieces.sender, intents) };
}

describe("NotebookKeys", () => {
  it("turns keys into intents: Shift+Enter runs and moves on, D D deletes, M makes markdown", () => {
    const { keys, did, store } = setup("edit");
    assert.equal(keys.press({ key: "Enter", shift: true }), true);
    assert.deepEqual(did, ["run a"]);
    assert.equal(store.getState().ui.selectedId, "b");
    keys.pressInCommandMode(["d", "d"]);
    keys.press({ key: "m" });
    assert.deepEqual(did, ["run a", "delete b", "kind a markdown"], "the machine moved the selection off the deleted cell");
  });

  it("drops a key this viewer may not use, with a notice, and keeps the selection", () => {
    const { keys, did, store, notices } = setup("read");
    keys.press({ key: "Enter", shift: true });
    assert.deepEqual(did, []);
    assert.equal(store.getState().ui.selectedId, "a");
    assert.equal(notices().length, 1);
    keys.runCommand("insert-below");
    assert.deepEqual(did, []);
  });

  it("runs a palette command as its keys would, opens and closes panels, follows the editor's focus", () => {
    const { keys, did, store } = setup("edit");
    keys.runCommand("insert-below");
    assert.deepEqual(did, ["insert 1 code"]);
    keys.runCommand("find");
    assert.equal(store.getState().panel, "find");
    keys.setPanel(null);
    keys.toggleToc();
    assert.deepEqual([store.getState().panel, store.getState().tocOpen], [null, true]);
    keys.selectCell("b", "edit");
    assert.equal(keys.selectedIndex(), 1);
    keys.editorBlurred("a");
    assert.equal(store.getState().ui.mode, "edit", "another cell's blur changes nothing");
    keys.editorBlurred("b");
    assert.equal(store.getState().ui.mode, "command");
  });

  it("needs of each action are the op table's", () => {
    assert.equal(actionNeed({ type: "open", panel: "help" }), null);
    assert.equal(actionNeed({ type: "run", cellIds: [] }), "run");
    assert.equal(actionNeed({ type: "undo-delete" }), "edit");
    assert.equal(actionNeed({ type: "interrupt" }), "run");
  });
});
