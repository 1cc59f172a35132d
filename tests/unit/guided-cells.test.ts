/** A guided scenario's intents: a form's refusal under the form, reattach with a timed Undo, predictions. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GuidedCells } from "../../components/notebook/model/guided-cells";
import { notebookPieces } from "../helpers/notebook-pieces";

function setup(undoMs = 60_000) {
  const pieces = notebookPieces("edit");
  return { ...pieces, guided: new GuidedCells("nb", pieces.store, pieces.sender, undoMs) };
}

describe("GuidedCells", () => {
  it("shows a refused form change under its form, not as a notice, and clears it on the next change", async () => {
    const { guided, transport, store, notices } = setup();
    transport.answers.set("set-parameters", { refuse: "batch_size must be an int" });
    const shown = new Promise<void>((resolve) => store.subscribe(() => "a" in store.getState().formErrors && resolve()));
    guided.setParameters("a", { batch_size: 1.5 });
    await shown;
    assert.deepEqual(store.getState().formErrors, { a: "batch_size must be an int" });
    assert.deepEqual(notices(), []);
    transport.answers.delete("set-parameters");
    guided.setParameters("a", { batch_size: 2 });
    assert.deepEqual(store.getState().formErrors, {});
  });

  it("offers Undo after a reattach, for a while; Undo sends undo-reattach and takes the offer away", async () => {
    const { guided, transport, store } = setup();
    const offered = new Promise<void>((resolve) => store.subscribe(() => store.getState().undo !== null && resolve()));
    guided.reattachTemplate("a");
    await offered;
    assert.deepEqual(store.getState().undo, { cellId: "a", templateId: "" });
    guided.undoReattach();
    assert.equal(store.getState().undo, null);
    assert.deepEqual(transport.ops, ["reattach-template", "undo-reattach"]);
    const timed = setup(1);
    const gone = new Promise<void>((resolve) => timed.store.subscribe(() => timed.store.getState().undo === null && timed.transport.ops.length > 0 && resolve()));
    timed.guided.reattachTemplate("a");
    await gone;
  });

  it("offers no Undo when the reattach is refused, and says so", async () => {
    const { guided, transport, store, notices } = setup();
    transport.answers.set("reattach-template", { refuse: "not a template cell" });
    guided.reattachTemplate("a");
    await new Promise<void>((resolve) => store.subscribe(resolve));
    assert.equal(store.getState().undo, null);
    assert.deepEqual(notices(), ["Reattaching the cell failed: not a template cell"]);
  });

  it("commits a prediction and resolves with the server's answer", async () => {
    const { guided, transport } = setup();
    assert.equal((await guided.commitPrediction("q", "c"))?.ok, true);
    assert.deepEqual(transport.ops, ["commit-prediction"]);
  });
});
