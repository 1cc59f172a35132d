import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CHORD_TIMEOUT_MS,
  handleKey,
  initialCommandModeState,
  type CommandModeState,
  type KeyContext,
  type KeyInput,
  type KeyResult,
} from "../../components/notebook/model/command-mode";

const cells: KeyContext["cells"] = [
  { id: "a", kind: "code" },
  { id: "b", kind: "markdown" },
  { id: "c", kind: "code" },
];
const ctx: KeyContext = { cells, newCellId: "new" };

function key(k: string, mods: Partial<Omit<KeyInput, "key">> = {}): KeyInput {
  return { key: k, shift: false, ctrl: false, alt: false, meta: false, at: 0, ...mods };
}

function state(selectedId: string | null, mode: CommandModeState["mode"] = "command"): CommandModeState {
  return { ...initialCommandModeState, selectedId, mode };
}

/** Press keys in order, collecting the actions. */
function press(start: CommandModeState, keys: KeyInput[], context: KeyContext = ctx): KeyResult {
  let s = start;
  const actions: KeyResult["actions"] = [];
  let handled = false;
  for (const k of keys) {
    const r = handleKey(s, k, context);
    s = r.state;
    actions.push(...r.actions);
    handled = r.handled;
  }
  return { state: s, actions, handled };
}

describe("modes", () => {
  it("Enter enters edit mode, Escape leaves it", () => {
    const edit = handleKey(state("a"), key("Enter"), ctx);
    assert.equal(edit.state.mode, "edit");
    assert.equal(edit.handled, true);
    const back = handleKey(edit.state, key("Escape"), ctx);
    assert.equal(back.state.mode, "command");
    assert.equal(back.state.selectedId, "a");
  });

  it("leaves ordinary typing in edit mode to the editor", () => {
    for (const k of ["a", "d", "0", "ArrowDown", "Enter"]) {
      const r = handleKey(state("a", "edit"), key(k), ctx);
      assert.equal(r.handled, false, k);
      assert.deepEqual(r.actions, []);
      assert.equal(r.state.mode, "edit");
    }
  });

  it("lets the browser have modified letters in command mode (Ctrl+C, Cmd+R)", () => {
    assert.equal(handleKey(state("a"), key("c", { ctrl: true }), ctx).handled, false);
    assert.equal(handleKey(state("a"), key("r", { meta: true }), ctx).handled, false);
  });
});

describe("selection", () => {
  it("moves with arrows and J/K, stopping at the ends", () => {
    assert.equal(press(state("a"), [key("ArrowDown"), key("j")]).state.selectedId, "c");
    assert.equal(press(state("c"), [key("j")]).state.selectedId, "c");
    assert.equal(press(state("c"), [key("k"), key("ArrowUp"), key("k")]).state.selectedId, "a");
  });

  it("repairs a selection whose cell was deleted elsewhere", () => {
    assert.equal(handleKey(state("gone"), key("j"), ctx).state.selectedId, "b");
  });
});

describe("structure keys", () => {
  it("A inserts above and B below, selecting the new cell", () => {
    const above = handleKey(state("b"), key("a"), ctx);
    assert.deepEqual(above.actions, [{ type: "insert-cell", index: 1, cellId: "new", kind: "code" }]);
    assert.equal(above.state.selectedId, "new");
    const below = handleKey(state("b"), key("b"), ctx);
    assert.deepEqual(below.actions, [{ type: "insert-cell", index: 2, cellId: "new", kind: "code" }]);
    assert.equal(below.state.mode, "command");
  });

  it("D,D deletes and selects the next cell (the previous one at the end)", () => {
    const mid = press(state("b"), [key("d"), key("d")]);
    assert.deepEqual(mid.actions, [{ type: "delete-cell", cellId: "b" }]);
    assert.equal(mid.state.selectedId, "c");
    const last = press(state("c"), [key("d"), key("d")]);
    assert.equal(last.state.selectedId, "b");
  });

  it("a single D does nothing, and another key in between breaks the chord", () => {
    assert.deepEqual(handleKey(state("a"), key("d"), ctx).actions, []);
    assert.deepEqual(press(state("a"), [key("d"), key("x"), key("d")]).actions, []);
    assert.deepEqual(press(state("a"), [key("d"), key("i"), key("d")]).actions, []);
  });

  it("a chord expires after the timeout", () => {
    const r = press(state("a"), [key("d", { at: 0 }), key("d", { at: CHORD_TIMEOUT_MS + 1 })]);
    assert.deepEqual(r.actions, []);
    assert.notEqual(r.state.chord, null, "the late key starts a new chord");
  });

  it("deleting the only cell leaves a fresh empty cell", () => {
    const r = press(state("a"), [key("d"), key("d")], { cells: [{ id: "a", kind: "code" }], newCellId: "new" });
    assert.deepEqual(r.actions, [
      { type: "delete-cell", cellId: "a" },
      { type: "insert-cell", index: 0, cellId: "new", kind: "code" },
    ]);
    assert.equal(r.state.selectedId, "new");
  });

  it("M and Y change the kind only when it differs", () => {
    assert.deepEqual(handleKey(state("a"), key("m"), ctx).actions, [{ type: "set-kind", cellId: "a", kind: "markdown" }]);
    assert.deepEqual(handleKey(state("a"), key("y"), ctx).actions, []);
    assert.deepEqual(handleKey(state("b"), key("y"), ctx).actions, [{ type: "set-kind", cellId: "b", kind: "code" }]);
  });

  it("I,I interrupts and 0,0 restarts", () => {
    assert.deepEqual(press(state("a"), [key("i"), key("i")]).actions, [{ type: "interrupt" }]);
    assert.deepEqual(press(state("a"), [key("0"), key("0")]).actions, [{ type: "restart" }]);
  });
});

describe("run keys", () => {
  it("Shift+Enter runs and selects the next cell in command mode, from either mode", () => {
    for (const mode of ["command", "edit"] as const) {
      const r = handleKey(state("a", mode), key("Enter", { shift: true }), ctx);
      assert.deepEqual(r.actions, [{ type: "run", cellIds: ["a"] }]);
      assert.equal(r.state.selectedId, "b");
      assert.equal(r.state.mode, "command");
      assert.equal(r.handled, true);
    }
  });

  it("Shift+Enter on the last cell appends a new cell and edits it", () => {
    const r = handleKey(state("c", "edit"), key("Enter", { shift: true }), ctx);
    assert.deepEqual(r.actions, [
      { type: "run", cellIds: ["c"] },
      { type: "insert-cell", index: 3, cellId: "new", kind: "code" },
    ]);
    assert.equal(r.state.selectedId, "new");
    assert.equal(r.state.mode, "edit");
  });

  it("Ctrl+Enter (or Cmd+Enter) runs in place and goes to command mode", () => {
    for (const mods of [{ ctrl: true }, { meta: true }]) {
      const r = handleKey(state("b", "edit"), key("Enter", mods), ctx);
      assert.deepEqual(r.actions, [{ type: "run", cellIds: ["b"] }]);
      assert.equal(r.state.selectedId, "b");
      assert.equal(r.state.mode, "command");
    }
  });

  it("Alt+Enter runs and inserts a cell below in edit mode", () => {
    const r = handleKey(state("a", "edit"), key("Enter", { alt: true }), ctx);
    assert.deepEqual(r.actions, [
      { type: "run", cellIds: ["a"] },
      { type: "insert-cell", index: 1, cellId: "new", kind: "code" },
    ]);
    assert.equal(r.state.selectedId, "new");
    assert.equal(r.state.mode, "edit");
  });

  it("does nothing without cells", () => {
    const r = handleKey(state(null), key("Enter", { shift: true }), { cells: [], newCellId: "new" });
    assert.deepEqual(r.actions, []);
  });
});
