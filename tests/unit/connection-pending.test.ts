import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ErrorCode } from "../../server/core/errors";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import { classifyDisconnect, classifyOpenError } from "../../components/notebook/model/connection";
import { newCell } from "../../server/core/notebook/notebook-state";
import {
  acknowledgeEdit,
  classifySourceReply,
  draftKey,
  forgetCell,
  keepMine,
  mergeDraft,
  parseDraft,
  rebase,
  rebaseOnOwnWrite,
  recordEdit,
  serializeDraft,
  setSourceCommand,
  type PendingEdits,
  type SourceReplyOutcome,
  type StructuralCommand,
} from "../../components/notebook/model/pending-edits";
import { saveStatus, saveStatusText, type SaveInputs, type SaveStatus } from "../../components/notebook/model/save-status";
import { sourceHash } from "../../server/core/protocol/source-hash";

function snapshot(...cells: Cell[]): NotebookDocument {
  return { id: "nb", title: "nb", deleted: false, cells, kernel: { state: "idle", info: fakeInfo }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
}

const fakeInfo = { pid: 1, hostname: "h", python: "3.11", executable: "/usr/bin/python3", torch: "1.13", deviceMode: "2× cpu (no CUDA)" };

describe("pending edits", () => {
  it("revision numbers grow per cell, and an ack clears only the revision it confirms", () => {
    let p: PendingEdits = {};
    p = recordEdit(p, "a", { source: "x", kind: "code", index: 0, base: null });
    p = recordEdit(p, "a", { source: "xy", kind: "code", index: 0, base: null });
    assert.equal(p["a"]?.rev, 2);
    const afterOld = acknowledgeEdit(p, "a", 1, "x");
    assert.equal(afterOld["a"]?.source, "xy", "an old ack leaves the newer text pending");
    assert.equal(afterOld["a"]?.rev, 2);
    assert.deepEqual(acknowledgeEdit(p, "a", 2, "xy"), {});
    assert.equal(acknowledgeEdit(p, "zzz", 1, "x"), p);
  });

  it("forgets a deleted cell", () => {
    const p = recordEdit({}, "a", { source: "x", kind: "code", index: 0, base: null });
    assert.deepEqual(forgetCell(p, "a"), {});
    assert.equal(forgetCell(p, "b"), p);
  });
});

describe("edit bases", () => {
  const edit = (source: string, base: string | null) => ({ source, kind: "code" as const, index: 0, base });

  it("an edit keeps the base of the first unsaved edit of its cell", () => {
    let p: PendingEdits = recordEdit({}, "a", edit("x", sourceHash("server text")));
    p = recordEdit(p, "a", edit("xy", sourceHash("something else")));
    assert.equal(p["a"]?.base, sourceHash("server text"));
    assert.deepEqual(setSourceCommand("nb", "a", p["a"]!), {
      op: "set-source",
      notebookId: "nb",
      cellId: "a",
      source: "xy",
      baseHash: sourceHash("server text"),
    });
  });

  it("after our own edit is saved, newer text is based on what we saved", () => {
    let p: PendingEdits = recordEdit({}, "a", edit("x", sourceHash("")), 1);
    p = recordEdit(p, "a", edit("xy", null), 2);
    p = acknowledgeEdit(p, "a", 1, "x");
    assert.equal(p["a"]?.base, sourceHash("x"));
    assert.equal(p["a"]?.source, "xy");
  });

  it("a new edit after everything was saved starts from the base it is given", () => {
    let p: PendingEdits = recordEdit({}, "a", edit("x", sourceHash("")), 1);
    p = acknowledgeEdit(p, "a", 1, "x");
    p = recordEdit(p, "a", edit("x from another tab, then mine", sourceHash("x from another tab")), 2);
    assert.equal(p["a"]?.base, sourceHash("x from another tab"));
  });

  it("an edit from an old draft (no base) is sent without one", () => {
    const command = setSourceCommand("nb", "a", { source: "s", rev: 1, kind: "code", index: 0, base: null });
    assert.equal("baseHash" in command, false);
    assert.equal("force" in command, false);
  });

  it("keep mine re-bases the edit on their text and forces it once", () => {
    let p: PendingEdits = recordEdit({}, "a", edit("mine", sourceHash("old")), 1);
    p = keepMine(p, "a", "theirs");
    const command = setSourceCommand("nb", "a", p["a"]!);
    assert.equal(command.baseHash, sourceHash("theirs"));
    assert.equal(command.force, true);
    assert.equal(command.source, "mine");
    // Typed again before the forced send was answered: the answer re-bases and drops the force.
    p = recordEdit(p, "a", edit("mine, more", null), 2);
    p = acknowledgeEdit(p, "a", 1, "mine");
    assert.equal(p["a"]?.force, undefined);
    assert.equal(p["a"]?.base, sourceHash("mine"));
    assert.equal(keepMine({}, "a", "theirs").a, undefined, "nothing to keep once the edit is gone");
  });

  it("newer text on top of our own write whose answer was lost is based on that write", () => {
    const p: PendingEdits = recordEdit({}, "a", edit("x = 1\ny = 2", sourceHash("")), 2);
    const rebased = rebaseOnOwnWrite(p, "a", "x = 1");
    assert.deepEqual(rebased["a"], { ...p["a"], base: sourceHash("x = 1") });
    assert.equal(rebaseOnOwnWrite(p, "b", "x = 1"), p);
  });

  it("use theirs forgets the edit", () => {
    const p: PendingEdits = recordEdit({}, "a", edit("mine", sourceHash("old")));
    assert.deepEqual(forgetCell(p, "a"), {});
  });
});

describe("classifySourceReply", () => {
  const cases: Array<[string, Parameters<typeof classifySourceReply>[0], SourceReplyOutcome]> = [
    ["saved", { ok: true }, { kind: "saved" }],
    ["conflict", { ok: false, error: "changed", code: "conflict", conflict: { cellId: "a", theirSource: "theirs" } }, { kind: "conflict", theirSource: "theirs" }],
    [
      "conflict with our own text (an earlier send landed, its ack was lost) counts as saved",
      { ok: false, error: "changed", code: "conflict", conflict: { cellId: "a", theirSource: "mine" } },
      { kind: "saved" },
    ],
    ["refused", { ok: false, error: "disk full", code: "internal" }, { kind: "refused", error: "disk full" }],
    ["lost", { ok: false, error: "timed out", lost: true }, { kind: "lost", error: "timed out" }],
  ];
  for (const [name, reply, outcome] of cases) {
    it(name, () => assert.deepEqual(classifySourceReply(reply, "mine"), outcome));
  }
});

describe("rebase", () => {
  it("lets pending local text win over the snapshot and asks for it to be re-sent", () => {
    const pending = recordEdit({}, "a", { source: "typed while offline", kind: "code", index: 0, base: null });
    const merged = rebase(snapshot(newCell("a", "code", "server text"), newCell("b", "code", "untouched")), [], pending);
    assert.equal(merged.doc.cells[0]?.source, "typed while offline");
    assert.equal(merged.doc.cells[1]?.source, "untouched");
    assert.deepEqual(merged.reinserts, []);
  });

  it("keeps the snapshot's outputs and run state for cells with pending text", () => {
    const serverCell: Cell = { ...newCell("a", "code", "old"), executionCount: 4, outputs: [{ kind: "stream", name: "stdout", text: "4\n" }] };
    const merged = rebase(snapshot(serverCell), [], recordEdit({}, "a", { source: "new", kind: "code", index: 0, base: null }));
    assert.equal(merged.doc.cells[0]?.executionCount, 4);
    assert.deepEqual(merged.doc.cells[0]?.outputs, serverCell.outputs);
  });

  it("replays unacknowledged structural commands onto the snapshot, in order", () => {
    const outbox: StructuralCommand[] = [
      { op: "insert-cell", notebookId: "nb", index: 1, cell: { id: "n", kind: "code", source: "" } },
      { op: "set-kind", notebookId: "nb", cellId: "a", kind: "markdown" },
      { op: "move-cell", notebookId: "nb", cellId: "n", toIndex: 0 },
    ];
    const merged = rebase(snapshot(newCell("a"), newCell("b")), outbox, {});
    assert.deepEqual(
      merged.doc.cells.map((c) => [c.id, c.kind]),
      [
        ["n", "code"],
        ["a", "markdown"],
        ["b", "code"],
      ],
    );
    assert.deepEqual(merged.reinserts, []);
  });

  it("converges on the server's order while echoes and acks arrive", () => {
    // Offline: a cell "n" was inserted at 1 (outbox); the server, restarted, lost
    // cell "a" which has pending text, so "a" is re-inserted at 0.
    const pending = recordEdit({}, "a", { source: "a = 1", kind: "code", index: 0, base: null });
    const insertN: StructuralCommand = { op: "insert-cell", notebookId: "nb", index: 1, cell: { id: "n", kind: "code", source: "" } };
    const first = rebase(snapshot(newCell("fresh")), [insertN], pending);
    assert.deepEqual(first.doc.cells.map((c) => c.id), ["a", "fresh", "n"]);
    const reinsertA = first.reinserts[0];
    assert.ok(reinsertA !== undefined);
    // The server applies the commands in the order sent and echoes them; before
    // the acks arrive, both are still in the outbox and replay as no-ops.
    const serverAfterBoth = snapshot(newCell("a", "code", "a = 1"), newCell("fresh"), newCell("n"));
    const echoed = rebase(serverAfterBoth, [insertN, reinsertA], pending);
    assert.deepEqual(echoed.doc.cells.map((c) => c.id), ["a", "fresh", "n"]);
    assert.deepEqual(echoed.reinserts, []);
    // Acked: nothing pending, the page is the server's document itself.
    assert.equal(rebase(serverAfterBoth, [], {}).doc, serverAfterBoth);
  });

  it("is idempotent when the server already applied an outbox command before the link dropped", () => {
    const outbox: StructuralCommand[] = [{ op: "insert-cell", notebookId: "nb", index: 0, cell: { id: "n", kind: "code", source: "" } }];
    const merged = rebase(snapshot(newCell("n"), newCell("a")), outbox, {});
    assert.deepEqual(
      merged.doc.cells.map((c) => c.id),
      ["n", "a"],
    );
  });

  it("re-inserts cells the server no longer has instead of dropping their text", () => {
    // The server restarted and recreated the notebook with one empty cell.
    let pending: PendingEdits = {};
    pending = recordEdit(pending, "x", { source: "import torch", kind: "code", index: 0, base: null });
    pending = recordEdit(pending, "y", { source: "# Notes", kind: "markdown", index: 5, base: null });
    const merged = rebase(snapshot(newCell("fresh")), [], pending);
    assert.deepEqual(
      merged.doc.cells.map((c) => [c.id, c.kind, c.source]),
      [
        ["x", "code", "import torch"],
        ["fresh", "code", ""],
        ["y", "markdown", "# Notes"],
      ],
    );
    assert.deepEqual(
      merged.reinserts.map((c) => (c.op === "insert-cell" ? [c.cell.id, c.index, c.cell.source] : c.op)),
      [
        ["x", 0, "import torch"],
        ["y", 2, "# Notes"],
      ],
    );
  });

  it("does not resurrect a cell the user deleted locally", () => {
    let pending = recordEdit({}, "a", { source: "text", kind: "code", index: 0, base: null });
    pending = forgetCell(pending, "a");
    const outbox: StructuralCommand[] = [{ op: "delete-cell", notebookId: "nb", cellId: "a" }];
    const merged = rebase(snapshot(newCell("a"), newCell("b")), outbox, pending);
    assert.deepEqual(
      merged.doc.cells.map((c) => c.id),
      ["b"],
    );
  });
});

describe("drafts in localStorage", () => {
  it("round-trip through serialisation", () => {
    const pending = recordEdit({}, "a", { source: "x = 1\n", kind: "code", index: 3, base: null });
    const text = serializeDraft("nb", pending, 1234);
    assert.ok(text !== null);
    assert.deepEqual(parseDraft("nb", text), pending);
  });

  it("serialise to nothing when no edit is pending (the key is removed)", () => {
    assert.equal(serializeDraft("nb", {}, 0), null);
  });

  it("ignore corrupt, foreign or malformed drafts", () => {
    const other = serializeDraft("other", recordEdit({}, "a", { source: "x", kind: "code", index: 0, base: null }), 0);
    assert.deepEqual(parseDraft("nb", other), {});
    assert.deepEqual(parseDraft("nb", "{not json"), {});
    assert.deepEqual(parseDraft("nb", JSON.stringify({ version: 1, notebookId: "nb", savedAt: 0, edits: { a: { source: 5 } } })), {});
    assert.deepEqual(parseDraft("nb", null), {});
  });

  it("shared by two tabs: one tab's write keeps the other's unsaved cells", () => {
    const tabA = recordEdit({}, "a", { source: "from tab A", kind: "code", index: 0, base: null });
    const tabB = recordEdit({}, "b", { source: "from tab B", kind: "code", index: 1, base: null });
    // Tab B closes first and writes its draft; then tab A, which never touched "b", writes.
    const afterB = mergeDraft({}, tabB, new Set(["b"]));
    const afterA = mergeDraft(afterB, tabA, new Set(["a"]));
    assert.deepEqual(Object.keys(afterA).sort(), ["a", "b"]);
    // Tab B saves "b" later: its write drops "b" and leaves "a" alone.
    assert.deepEqual(Object.keys(mergeDraft(afterA, {}, new Set(["b"]))), ["a"]);
  });

  it("keep each edit's base and force", () => {
    const pending = keepMine(recordEdit({}, "a", { source: "x", kind: "code", index: 0, base: sourceHash("b") }), "a", "theirs");
    const text = serializeDraft("nb", pending, 0);
    assert.ok(text !== null);
    assert.deepEqual(parseDraft("nb", text), pending);
  });

  it("from before bases were kept still load, with an unknown base", () => {
    const v1 = JSON.stringify({ version: 1, notebookId: "nb", savedAt: 0, edits: { a: { source: "kept", rev: 3, kind: "code", index: 2 } } });
    assert.deepEqual(parseDraft("nb", v1), { a: { source: "kept", rev: 3, kind: "code", index: 2, base: null } });
  });

  it("are keyed by notebook", () => {
    assert.notEqual(draftKey("a"), draftKey("b"));
  });
});

describe("classifyOpenError", () => {
  // By the refusal's code, never its words: only a notebook that does not exist is not worth asking for again.
  const cases: Array<[ErrorCode, ReturnType<typeof classifyOpenError>]> = [
    ["not-found", "not-found"],
    ["internal", "retry"],
    ["unavailable", "retry"],
    ["invalid", "retry"],
    ["busy", "retry"],
  ];
  for (const [code, policy] of cases) {
    it(`${code} → ${policy}`, () => assert.equal(classifyOpenError(code), policy));
  }
});

describe("saveStatus", () => {
  const base: SaveInputs = { connection: "connected", unsaved: 0, conflicts: 0, lastError: null };
  const cases: Array<[string, Partial<SaveInputs>, SaveStatus, string]> = [
    ["nothing pending", {}, { state: "saved" }, "All changes saved"],
    ["an edit in flight", { unsaved: 2 }, { state: "saving" }, "Saving…"],
    ["disconnected with edits", { unsaved: 1, connection: "reconnecting" }, { state: "offline" }, "Offline — changes kept in this browser"],
    ["disconnected, nothing pending", { connection: "reconnecting" }, { state: "saved" }, "All changes saved"],
    ["refused, retrying", { unsaved: 1, lastError: "disk full" }, { state: "error", reason: "disk full" }, "Save failed: disk full (retrying)"],
    ["error, but everything saved since", { lastError: "disk full" }, { state: "saved" }, "All changes saved"],
    ["a conflict beats everything", { unsaved: 1, conflicts: 1, connection: "offline", lastError: "x" }, { state: "conflict", cells: 1 }, "A cell was changed in another tab"],
  ];
  for (const [name, inputs, status, text] of cases) {
    it(name, () => {
      const got = saveStatus({ ...base, ...inputs });
      assert.deepEqual(got, status);
      assert.equal(saveStatusText(got), text);
    });
  }
});

describe("classifyDisconnect", () => {
  const cases: Array<[string, ReturnType<typeof classifyDisconnect>]> = [
    ["io client disconnect", "closed"],
    ["io server disconnect", "reconnect-ourselves"],
    ["transport close", "auto-reconnect"],
    ["transport error", "auto-reconnect"],
    ["ping timeout", "auto-reconnect"],
    ["parse error", "auto-reconnect"],
  ];
  for (const [reason, policy] of cases) {
    it(`${reason} → ${policy}`, () => assert.equal(classifyDisconnect(reason), policy));
  }
});
