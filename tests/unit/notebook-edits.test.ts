/** The user's changes to cells: typing saved like typing, replace with its Undo, delete with Z, move, kind, outputs. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { NotebookEdits } from "../../components/notebook/model/notebook-edits";
import type { Cell } from "../../server/core/protocol/notebook-model";
import { notebookPieces } from "../helpers/notebook-pieces";

function setup(access: NotebookAccessLevel = "edit", cells?: Cell[] | null) {
  const pieces = notebookPieces(access, cells);
  const selected: string[] = [];
  const notify = (message: string): void => pieces.store.update({ notices: [...pieces.store.getState().notices, { id: 0, message }] });
  const edits = new NotebookEdits({ notebookId: "nb", ...pieces, selectCell: (id) => selected.push(id), notify });
  const sources = (): string[] => (pieces.store.getState().doc?.cells ?? []).map((c) => `${c.id}:${c.source}`);
  return { ...pieces, edits, selected, sources };
}

describe("NotebookEdits", () => {
  it("shows typed text at once and keeps it pending; a viewer who may not edit changes nothing", () => {
    const { edits, transport, sources } = setup();
    edits.editSource("a", "x = 2");
    assert.deepEqual(sources(), ["a:x = 2", "b:# b"]);
    assert.equal(transport.pendingEdits.a?.source, "x = 2");
    const reader = setup("run");
    reader.edits.editSource("a", "x = 3");
    assert.deepEqual(reader.sources(), ["a:x = 1", "b:# b"]);
    assert.deepEqual(reader.notices(), ["This notebook is shared with you: it cannot be changed from here"]);
  });

  it("replaces in several cells, and Undo puts back only the cells nobody changed since", () => {
    const { edits, store, sources } = setup();
    edits.replaceSources({ a: "y = 1", b: "# y" }, "2 replaced");
    assert.equal(store.getState().replaceUndo?.message, "2 replaced");
    edits.editSource("b", "# typed since");
    edits.undoReplace();
    assert.deepEqual(sources(), ["a:x = 1", "b:# typed since"]);
    assert.equal(store.getState().replaceUndo, null);
  });

  it("remembers a deleted cell for Z, which puts it back where it was and selects it", () => {
    const { edits, store, transport, selected, sources } = setup();
    edits.deleteCell("a");
    assert.deepEqual(sources(), ["b:# b"]);
    edits.undoDelete();
    const back = store.getState().doc?.cells[0];
    assert.equal(back?.source, "x = 1");
    assert.deepEqual(selected, [back?.id]);
    assert.deepEqual(transport.ops, ["delete-cell", "insert-cell"]);
    edits.undoDelete();
    assert.ok(store.getState().notices.some((n) => n.message === "No deleted cell to restore"));
  });

  it("moves within the notebook only, and sends no empty clear nor anything before the notebook opened", () => {
    const { edits, transport, sources } = setup();
    edits.moveCell(0, -1);
    edits.moveCell(1, 1);
    edits.clearOutputs([]);
    assert.deepEqual(transport.ops, []);
    edits.moveCell(0, 1);
    edits.setKind("a", "markdown");
    assert.deepEqual(sources(), ["b:# b", "a:x = 1"]);
    assert.deepEqual(transport.ops, ["move-cell", "set-kind"]);
    const opening = setup("edit", null);
    opening.edits.insertCell(0, "code", "n");
    assert.deepEqual(opening.transport.ops, []);
  });
});
