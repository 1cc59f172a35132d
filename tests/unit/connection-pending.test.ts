import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Cell, NotebookDocument } from "../../server/protocol/notebook-model";
import { classifyDisconnect } from "../../components/model/connection";
import { newCell } from "../../components/model/notebook-state";
import {
  acknowledgeEdit,
  draftKey,
  forgetCell,
  mergeDraft,
  parseDraft,
  rebase,
  recordEdit,
  serializeDraft,
  type PendingEdits,
  type StructuralCommand,
} from "../../components/model/pending-edits";

function snapshot(...cells: Cell[]): NotebookDocument {
  return { id: "nb", title: "nb", cells, kernel: { state: "idle", info: fakeInfo } };
}

const fakeInfo = { pid: 1, hostname: "h", python: "3.11", executable: "/usr/bin/python3", torch: "1.13", deviceMode: "2× cpu (no CUDA)" };

describe("pending edits", () => {
  it("revision numbers grow per cell, and an ack clears only the revision it confirms", () => {
    let p: PendingEdits = {};
    p = recordEdit(p, "a", { source: "x", kind: "code", index: 0 });
    p = recordEdit(p, "a", { source: "xy", kind: "code", index: 0 });
    assert.equal(p["a"]?.rev, 2);
    assert.equal(acknowledgeEdit(p, "a", 1), p, "an old ack leaves the newer text pending");
    assert.deepEqual(acknowledgeEdit(p, "a", 2), {});
    assert.equal(acknowledgeEdit(p, "zzz", 1), p);
  });

  it("forgets a deleted cell", () => {
    const p = recordEdit({}, "a", { source: "x", kind: "code", index: 0 });
    assert.deepEqual(forgetCell(p, "a"), {});
    assert.equal(forgetCell(p, "b"), p);
  });
});

describe("rebase", () => {
  it("lets pending local text win over the snapshot and asks for it to be re-sent", () => {
    const pending = recordEdit({}, "a", { source: "typed while offline", kind: "code", index: 0 });
    const merged = rebase(snapshot(newCell("a", "code", "server text"), newCell("b", "code", "untouched")), [], pending);
    assert.equal(merged.doc.cells[0]?.source, "typed while offline");
    assert.equal(merged.doc.cells[1]?.source, "untouched");
    assert.deepEqual(merged.reinserts, []);
  });

  it("keeps the snapshot's outputs and run state for cells with pending text", () => {
    const serverCell: Cell = { ...newCell("a", "code", "old"), executionCount: 4, outputs: [{ kind: "stream", name: "stdout", text: "4\n" }] };
    const merged = rebase(snapshot(serverCell), [], recordEdit({}, "a", { source: "new", kind: "code", index: 0 }));
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
    const pending = recordEdit({}, "a", { source: "a = 1", kind: "code", index: 0 });
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
    pending = recordEdit(pending, "x", { source: "import torch", kind: "code", index: 0 });
    pending = recordEdit(pending, "y", { source: "# Notes", kind: "markdown", index: 5 });
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
    let pending = recordEdit({}, "a", { source: "text", kind: "code", index: 0 });
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
    const pending = recordEdit({}, "a", { source: "x = 1\n", kind: "code", index: 3 });
    const text = serializeDraft("nb", pending, 1234);
    assert.ok(text !== null);
    assert.deepEqual(parseDraft("nb", text), pending);
  });

  it("serialise to nothing when no edit is pending (the key is removed)", () => {
    assert.equal(serializeDraft("nb", {}, 0), null);
  });

  it("ignore corrupt, foreign or malformed drafts", () => {
    const other = serializeDraft("other", recordEdit({}, "a", { source: "x", kind: "code", index: 0 }), 0);
    assert.deepEqual(parseDraft("nb", other), {});
    assert.deepEqual(parseDraft("nb", "{not json"), {});
    assert.deepEqual(parseDraft("nb", JSON.stringify({ version: 1, notebookId: "nb", savedAt: 0, edits: { a: { source: 5 } } })), {});
    assert.deepEqual(parseDraft("nb", null), {});
  });

  it("shared by two tabs: one tab's write keeps the other's unsaved cells", () => {
    const tabA = recordEdit({}, "a", { source: "from tab A", kind: "code", index: 0 });
    const tabB = recordEdit({}, "b", { source: "from tab B", kind: "code", index: 1 });
    // Tab B closes first and writes its draft; then tab A, which never touched "b", writes.
    const afterB = mergeDraft({}, tabB, new Set(["b"]));
    const afterA = mergeDraft(afterB, tabA, new Set(["a"]));
    assert.deepEqual(Object.keys(afterA).sort(), ["a", "b"]);
    // Tab B saves "b" later: its write drops "b" and leaves "a" alone.
    assert.deepEqual(Object.keys(mergeDraft(afterA, {}, new Set(["b"]))), ["a"]);
  });

  it("are keyed by notebook", () => {
    assert.notEqual(draftKey("a"), draftKey("b"));
  });
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
