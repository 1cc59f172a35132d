import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { handleKey, initialCommandModeState, type KeyInput } from "../../components/notebook/model/command-mode";
import { bindingLabel, findShortcut, shortcutLabel, shortcutSections, SHORTCUTS } from "../../components/notebook/model/shortcuts";

function key(k: string, mods: Partial<Omit<KeyInput, "key">> = {}): KeyInput {
  return { key: k, shift: false, ctrl: false, alt: false, meta: false, at: 0, ...mods };
}

const ctx = { cells: [{ id: "a", kind: "code" as const }, { id: "b", kind: "markdown" as const }], newCellId: "new" };

describe("the shortcut table", () => {
  it("gives every command one entry and no key to two commands of the same mode", () => {
    const commands = SHORTCUTS.map((s) => s.command);
    assert.equal(new Set(commands).size, commands.length);
    const seen = new Map<string, string>();
    for (const s of SHORTCUTS) {
      for (const b of s.bindings) {
        for (const mode of s.mode === "both" ? ["command", "edit"] : [s.mode]) {
          const id = `${mode}:${bindingLabel(b)}`;
          assert.equal(seen.get(id), undefined, `${id} is bound twice`);
          seen.set(id, s.command);
        }
      }
    }
  });

  it("is what the key machine follows: each command-mode binding is handled, and does what the table says", () => {
    for (const s of SHORTCUTS.filter((x) => x.mode !== "edit")) {
      for (const b of s.bindings) {
        const input = key(b.key, { shift: b.shift ?? false, ctrl: b.ctrl ?? false, alt: b.alt ?? false });
        assert.equal(findShortcut("command", input)?.shortcut.command, s.command);
        let r = handleKey({ ...initialCommandModeState, selectedId: "a" }, input, ctx);
        if (b.chord === true) r = handleKey(r.state, input, ctx);
        assert.equal(r.handled, true, `${bindingLabel(b)} is handled`);
      }
    }
  });

  it("maps H, Z, T, Ctrl+F and Ctrl+Shift+P (Cmd too) to their panels and the undo", () => {
    const s = { ...initialCommandModeState, selectedId: "a" };
    assert.deepEqual(handleKey(s, key("h"), ctx).actions, [{ type: "open", panel: "help" }]);
    assert.deepEqual(handleKey(s, key("z"), ctx).actions, [{ type: "undo-delete" }]);
    assert.deepEqual(handleKey(s, key("t"), ctx).actions, [{ type: "open", panel: "toggle-toc" }]);
    assert.deepEqual(handleKey(s, key("f", { ctrl: true }), ctx).actions, [{ type: "open", panel: "find" }]);
    assert.deepEqual(handleKey(s, key("P", { ctrl: true, shift: true }), ctx).actions, [{ type: "open", panel: "palette" }]);
    assert.deepEqual(handleKey(s, key("P", { meta: true, shift: true }), ctx).actions, [{ type: "open", panel: "palette" }]);
    // In the editor these keys are the editor's (Ctrl+F is Monaco's own find there).
    const editing = { ...s, mode: "edit" as const };
    assert.equal(handleKey(editing, key("z"), ctx).handled, false);
    assert.equal(handleKey(editing, key("f", { ctrl: true }), ctx).handled, false);
    // The palette opens from the editor as well.
    assert.deepEqual(handleKey(editing, key("P", { ctrl: true, shift: true }), ctx).actions, [{ type: "open", panel: "palette" }]);
  });

  it("writes bindings the way the help shows them", () => {
    assert.equal(shortcutLabel("run-advance"), "Shift+Enter");
    assert.equal(shortcutLabel("delete-cell"), "D, D");
    assert.equal(shortcutLabel("palette"), "Ctrl+Shift+P");
    assert.equal(shortcutLabel("select-up"), "↑ / K");
    assert.equal(shortcutLabel("nothing"), "");
  });

  it("lists every shortcut in exactly one help section", () => {
    const listed = shortcutSections().flatMap((section) => section.shortcuts.map((s) => s.command));
    assert.deepEqual([...listed].sort(), SHORTCUTS.map((s) => s.command).sort());
  });
});
