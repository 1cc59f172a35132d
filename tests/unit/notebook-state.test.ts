import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Cell, CellOutput, LiveMetrics, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import {
  appendStream,
  applyLocalAction,
  applyServerEvent,
  newCell,
  replaceTail,
  reuseUnchangedCells,
} from "../../server/core/notebook/notebook-state";

function doc(...cells: Cell[]): NotebookDocument {
  return { id: "nb", title: "nb", deleted: false, cells, kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
}

function apply(d: NotebookDocument, ...events: NotebookEvent[]): NotebookDocument {
  return events.reduce((acc, e) => applyServerEvent(acc, e), d);
}

const ids = (d: NotebookDocument) => d.cells.map((c) => c.id);

describe("structure events", () => {
  it("inserts at the index, clamped to the end", () => {
    const d = apply(doc(newCell("a"), newCell("b")), { type: "cell-inserted", index: 1, cell: newCell("x") }, {
      type: "cell-inserted",
      index: 99,
      cell: newCell("z"),
    });
    assert.deepEqual(ids(d), ["a", "x", "b", "z"]);
  });

  it("never duplicates a cell: inserting an id that exists changes nothing", () => {
    const start = doc(newCell("a"), newCell("x", "code", "typed"));
    assert.equal(apply(start, { type: "cell-inserted", index: 0, cell: newCell("x") }), start);
    assert.equal(applyLocalAction(start, { type: "insert-cell", index: 0, cell: newCell("x") }), start);
  });

  it("deletes and moves; unknown ids are no-ops that keep identity", () => {
    const start = doc(newCell("a"), newCell("b"), newCell("c"));
    const moved = apply(start, { type: "cell-moved", cellId: "a", toIndex: 2 });
    assert.deepEqual(ids(moved), ["b", "c", "a"]);
    const deleted = apply(moved, { type: "cell-deleted", cellId: "c" });
    assert.deepEqual(ids(deleted), ["b", "a"]);
    assert.equal(apply(deleted, { type: "cell-deleted", cellId: "nope" }), deleted);
    assert.equal(apply(deleted, { type: "cell-moved", cellId: "nope", toIndex: 0 }), deleted);
  });

  it("keeps the identity of cells an event does not touch", () => {
    const start = doc(newCell("a"), newCell("b"));
    const next = apply(start, { type: "cell-stream", cellId: "b", name: "stdout", text: "hi" });
    assert.equal(next.cells[0], start.cells[0]);
    assert.notEqual(next.cells[1], start.cells[1]);
  });
});

describe("cell-source", () => {
  it("sets the text of the cell it names and no other", () => {
    const start = doc(newCell("a", "code", "mine"), newCell("b", "code", "old"));
    const next = apply(start, { type: "cell-source", cellId: "b", source: "theirs", by: "other" });
    assert.equal(next.cells[1]?.source, "theirs");
    assert.equal(next.cells[0], start.cells[0]);
    assert.equal(apply(next, { type: "cell-source", cellId: "b", source: "theirs", by: "me" }), next);
  });
});

describe("run lifecycle", () => {
  it("goes queued → running → outputs → finished → idle with the count", () => {
    const d = apply(
      doc(newCell("a", "code", "print(1)")),
      { type: "cell-run-state", cellId: "a", runState: "queued", executionCount: null, executionId: null },
      { type: "cell-outputs-cleared", cellId: "a" },
      { type: "cell-run-state", cellId: "a", runState: "running", executionCount: null, executionId: null },
      { type: "cell-stream", cellId: "a", name: "stdout", text: "1\n" },
      { type: "cell-output", cellId: "a", output: { kind: "result", executionCount: 3, data: { "text/plain": "2" } } },
      { type: "cell-finished", cellId: "a", status: "ok", durationMs: 12 },
      { type: "cell-run-state", cellId: "a", runState: "idle", executionCount: 3, executionId: null },
    );
    const cell = d.cells[0];
    assert.ok(cell);
    assert.equal(cell.runState, "idle");
    assert.equal(cell.executionCount, 3);
    assert.deepEqual(cell.lastRun, { status: "ok", durationMs: 12 });
    assert.deepEqual(cell.outputs, [
      { kind: "stream", name: "stdout", text: "1\n" },
      { kind: "result", executionCount: 3, data: { "text/plain": "2" } },
    ]);
  });

  it("clears previous outputs", () => {
    const withOutput: Cell = { ...newCell("a"), outputs: [{ kind: "stream", name: "stdout", text: "old" }] };
    const d = apply(doc(withOutput), { type: "cell-outputs-cleared", cellId: "a" });
    assert.deepEqual(d.cells[0]?.outputs, []);
  });

  it("tracks kernel status", () => {
    const d = apply(doc(), { type: "kernel-status", status: { state: "dead", reason: "killed by SIGKILL", lastOutput: "" } });
    assert.deepEqual(d.kernel, { state: "dead", reason: "killed by SIGKILL", lastOutput: "" });
  });
});

describe("live metrics", () => {
  const metrics = (points: number, step: number, loss: number): LiveMetrics => ({ points, ranks: [{ rank: 0, step, values: { loss } }] });

  it("replaces the cell's metrics with each cell-metrics event, touching no other cell", () => {
    const start = doc(newCell("a"), newCell("b"));
    const d = apply(
      start,
      { type: "cell-metrics", cellId: "a", liveMetrics: metrics(1, 0, 1) },
      { type: "cell-metrics", cellId: "a", liveMetrics: metrics(5, 4, 0.2) },
    );
    assert.deepEqual(d.cells[0]?.liveMetrics, metrics(5, 4, 0.2));
    assert.equal(d.cells[1], start.cells[1]);
    assert.equal(apply(d, { type: "cell-metrics", cellId: "nope", liveMetrics: metrics(1, 0, 1) }), d);
  });

  it("keeps the last run's metrics after it finishes and drops them when the next run starts", () => {
    const d = apply(
      doc(newCell("a")),
      { type: "cell-run-state", cellId: "a", runState: "running", executionCount: null, executionId: null },
      { type: "cell-metrics", cellId: "a", liveMetrics: metrics(3, 2, 0.5) },
      { type: "cell-finished", cellId: "a", status: "ok", durationMs: 5 },
      { type: "cell-run-state", cellId: "a", runState: "idle", executionCount: 1, executionId: null },
    );
    assert.deepEqual(d.cells[0]?.liveMetrics, metrics(3, 2, 0.5));
    const queued = apply(d, { type: "cell-run-state", cellId: "a", runState: "queued", executionCount: 1, executionId: null });
    assert.deepEqual(queued.cells[0]?.liveMetrics, metrics(3, 2, 0.5), "queued: the old run's table stays until the new run starts");
    const rerun = apply(queued, { type: "cell-run-state", cellId: "a", runState: "running", executionCount: 1, executionId: null });
    assert.equal(rerun.cells[0]?.liveMetrics, null);
  });
});

describe("notebook events", () => {
  it("renames, and marks deleted and restored, keeping identity when nothing changes", () => {
    const start = doc(newCell("a"));
    const renamed = apply(start, { type: "notebook-renamed", title: "DDP vs DP" });
    assert.equal(renamed.title, "DDP vs DP");
    assert.equal(renamed.cells, start.cells);
    assert.equal(apply(renamed, { type: "notebook-renamed", title: "DDP vs DP" }), renamed);
    const deleted = apply(renamed, { type: "notebook-deleted" });
    assert.equal(deleted.deleted, true);
    assert.equal(apply(deleted, { type: "notebook-deleted" }), deleted);
    const restored = apply(deleted, { type: "notebook-restored" });
    assert.equal(restored.deleted, false);
    assert.equal(apply(restored, { type: "notebook-restored" }), restored);
  });
});

describe("hang reports", () => {
  it("arrive as an ordinary output, in order after the stream before them", () => {
    const hang: CellOutput = {
      kind: "hang",
      idleMs: 62_000,
      summary: ["kernel: in sleep (<cell>:1)"],
      processes: [{ label: "kernel", pid: 42, alive: true, stack: "File <cell>, line 1, in <module>" }],
      answeredBy: "kernel",
    };
    const d = apply(
      doc(newCell("a")),
      { type: "cell-stream", cellId: "a", name: "stdout", text: "start\n" },
      { type: "cell-output", cellId: "a", output: hang },
    );
    assert.deepEqual(d.cells[0]?.outputs.map((o) => o.kind), ["stream", "hang"]);
  });
});

describe("streams", () => {
  it("appends to the last output of the same stream and starts a new one otherwise", () => {
    let outs = appendStream([], "stdout", "a");
    outs = appendStream(outs, "stdout", "b");
    outs = appendStream(outs, "stderr", "E");
    outs = appendStream(outs, "stdout", "c");
    assert.deepEqual(outs, [
      { kind: "stream", name: "stdout", text: "ab" },
      { kind: "stream", name: "stderr", text: "E" },
      { kind: "stream", name: "stdout", text: "c" },
    ]);
  });

  it("does not merge across a non-stream output", () => {
    const outs = appendStream([{ kind: "stream", name: "stdout", text: "a" }, { kind: "display", data: { "text/plain": "x" } }], "stdout", "b");
    assert.equal(outs.length, 3);
  });

  it("keeps the head, then the elided marker, then the latest tail, replacing an earlier tail", () => {
    const head = appendStream([], "stdout", "HEAD");
    const first = replaceTail(head, 1000, [{ name: "stdout", text: "t1" }], 1);
    assert.deepEqual(first, [
      { kind: "stream", name: "stdout", text: "HEAD" },
      { kind: "elided", elidedBytes: 1000 },
      { kind: "stream", name: "stdout", text: "t1" },
    ]);
    const second = replaceTail(first, 5000, [
      { name: "stdout", text: "t2" },
      { name: "stdout", text: "t3" },
      { name: "stderr", text: "e" },
    ], 1);
    assert.deepEqual(second, [
      { kind: "stream", name: "stdout", text: "HEAD" },
      { kind: "elided", elidedBytes: 5000 },
      { kind: "stream", name: "stdout", text: "t2t3" },
      { kind: "stream", name: "stderr", text: "e" },
    ]);
  });

  it("applies cell-stream-tail through the reducer", () => {
    const d = apply(
      doc(newCell("a")),
      { type: "cell-stream", cellId: "a", name: "stdout", text: "x".repeat(10) },
      { type: "cell-stream-tail", cellId: "a", elidedBytes: 98_200_000, tail: [{ name: "stdout", text: "end\n" }], headOutputs: 1 },
    );
    assert.deepEqual(
      d.cells[0]?.outputs.map((o) => o.kind),
      ["stream", "elided", "stream"],
    );
  });
});

describe("the document it is given", () => {
  function deepFreeze<T>(value: T): T {
    if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
      Object.freeze(value);
      for (const child of Object.values(value)) deepFreeze(child);
    }
    return value;
  }

  it("is never changed, by any event: the server answers a joining viewer with its current document as it is", () => {
    const running: Cell = { ...newCell("a", "code", "print(1)"), outputs: [{ kind: "stream", name: "stdout", text: "x" }], runState: "running", executionId: "e1" };
    const events: NotebookEvent[] = [
      { type: "cell-inserted", index: 1, cell: newCell("n") },
      { type: "cell-moved", cellId: "b", toIndex: 0 },
      { type: "cell-source", cellId: "b", source: "y = 2", by: "s" },
      { type: "cell-kind", cellId: "b", kind: "markdown" },
      { type: "cell-run-state", cellId: "a", runState: "idle", executionCount: 3, executionId: "e1" },
      { type: "cell-template", cellId: "b", template: null, source: "z" },
      { type: "prediction-committed", prediction: { questionId: "q", choice: "c", afterRun: false, committedAt: "2026-01-01T00:00:00Z" } },
      { type: "cell-outputs-cleared", cellId: "a" },
      { type: "cell-output", cellId: "a", output: { kind: "display", data: { "text/plain": "d" } } },
      { type: "cell-stream", cellId: "a", name: "stdout", text: "more" },
      { type: "cell-stream-tail", cellId: "a", elidedBytes: 5, tail: [{ name: "stderr", text: "t" }], headOutputs: 1 },
      { type: "cell-finished", cellId: "a", status: "ok", durationMs: 1 },
      { type: "cell-metrics", cellId: "a", liveMetrics: { points: 1, ranks: [{ rank: 0, step: 1, values: { loss: 1 } }] } },
      { type: "kernel-status", status: { state: "starting" } },
      { type: "notebook-renamed", title: "t2" },
      { type: "notebook-deleted" },
      { type: "notebook-restored" },
      { type: "cell-deleted", cellId: "b" },
    ];
    for (const event of events) {
      const before = deepFreeze(doc(running, newCell("b", "code", "x")));
      const copy = structuredClone(before);
      applyServerEvent(before, event);
      assert.deepEqual(before, copy, event.type);
    }
  });
});

describe("local actions", () => {
  it("sets kind and source, clears outputs, returning the same document when nothing changes", () => {
    const start = doc({ ...newCell("a", "code", "x"), outputs: [{ kind: "stream", name: "stdout", text: "o" }] });
    assert.equal(applyLocalAction(start, { type: "set-source", cellId: "a", source: "x" }), start);
    assert.equal(applyLocalAction(start, { type: "set-kind", cellId: "a", kind: "code" }), start);
    const md = applyLocalAction(start, { type: "set-kind", cellId: "a", kind: "markdown" });
    assert.equal(md.cells[0]?.kind, "markdown");
    const cleared = applyLocalAction(start, { type: "clear-outputs", cellIds: ["a"] });
    assert.deepEqual(cleared.cells[0]?.outputs, []);
    assert.equal(applyLocalAction(cleared, { type: "clear-outputs", cellIds: ["a"] }), cleared);
  });
});

describe("reuseUnchangedCells", () => {
  it("keeps the old object of every cell whose fields are unchanged, and the old document when nothing changed", () => {
    const a = newCell("a", "code", "x = 1");
    const b = newCell("b", "code", "y = 2");
    const before = doc(a, b);
    // Unsaved text re-applied on a server event: equal but fresh objects.
    const same = { ...before, cells: [{ ...a }, { ...b }] };
    assert.equal(reuseUnchangedCells(before, same), before);
    const edited = { ...before, cells: [{ ...a }, { ...b, source: "y = 3" }] };
    const result = reuseUnchangedCells(before, edited);
    assert.equal(result.cells[0], a, "untouched cell keeps its identity");
    assert.notEqual(result.cells[1], b);
    assert.equal(result.cells[1]!.source, "y = 3");
    const renamed = reuseUnchangedCells(before, { ...before, title: "other", cells: [{ ...a }, { ...b }] });
    assert.equal(renamed.title, "other", "a document-level change still shows");
    assert.equal(renamed.cells, before.cells);
    const reordered = reuseUnchangedCells(before, { ...before, cells: [{ ...b }, { ...a }] });
    assert.deepEqual(reordered.cells.map((c) => c.id), ["b", "a"]);
    assert.equal(reordered.cells[0], b);
  });
});
