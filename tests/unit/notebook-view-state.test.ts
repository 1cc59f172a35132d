/** The pure rules of the notebook page's state: where the selection goes, how many notices stay, form errors, the save indicator. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initialCommandModeState } from "../../components/notebook/model/command-mode";
import { keepSelection, sameSave, withFormError, withNotice } from "../../components/notebook/model/notebook-view-state";
import { newCell } from "../../server/core/notebook/notebook-state";

describe("notebook view state", () => {
  const [a, b, c] = [newCell("a"), newCell("b"), newCell("c")];
  const selected = (id: string | null) => ({ ...initialCommandModeState, selectedId: id });

  it("keeps the selection on a cell that is still there, else moves it near where it was, in command mode", () => {
    const ui = { ...selected("b"), mode: "edit" as const };
    assert.equal(keepSelection(ui, [a, b, c], [a, b, c]), ui);
    assert.deepEqual(keepSelection(ui, [a, b, c], [a, c]), { ...ui, selectedId: "c", mode: "command" });
    assert.deepEqual(keepSelection(selected("c"), [a, b, c], [a]), { ...selected("a"), mode: "command" });
    assert.deepEqual(keepSelection(selected("a"), [a], []), { ...selected(null), mode: "command" });
    assert.deepEqual(keepSelection(selected(null), [], [a, b]).selectedId, "a", "the first cell once there are cells");
  });

  it("keeps the newest four notices", () => {
    let notices = withNotice([], 1, "one");
    for (let id = 2; id <= 6; id++) notices = withNotice(notices, id, `n${id}`);
    assert.deepEqual(notices.map((n) => n.id), [3, 4, 5, 6]);
  });

  it("sets and clears a cell's form error, and gives the same object when nothing changes", () => {
    const none = {};
    const one = withFormError(none, "a", "batch_size too large");
    assert.deepEqual(one, { a: "batch_size too large" });
    assert.equal(withFormError(one, "a", "batch_size too large"), one);
    assert.equal(withFormError(none, "a", null), none);
    assert.deepEqual(withFormError(one, "a", null), {});
  });

  it("calls two save states the same when the indicator would say the same", () => {
    assert.equal(sameSave({ state: "saved" }, { state: "saved" }), true);
    assert.equal(sameSave({ state: "error", reason: "x" }, { state: "error", reason: "y" }), false);
    assert.equal(sameSave({ state: "saving" }, { state: "saved" }), false);
  });
});
