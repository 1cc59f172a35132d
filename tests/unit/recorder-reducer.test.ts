/**
 * The server keeps a cell's output within its budget (OutputRecorder) and
 * tells viewers what changed as events; every copy of the document, the
 * server's included, is those events applied with the one reducer. The two
 * must agree exactly, or a viewer that watched a run and one that joined
 * later see different outputs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyServerEvent, newCell } from "../../server/core/notebook/notebook-state";
import type { CellOutput, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { OutputRecorder, type OutputBudget, type StreamName } from "../../server/notebook/output-recorder";

const CELL = "c";

/** Events as the runtime sends them: appends as they come, the tail when flushed, a rich output after the tail it freezes. */
class Viewer {
  doc: NotebookDocument = { id: "nb", title: "nb", deleted: false, cells: [newCell(CELL)], kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
  private tailDirty = false;

  constructor(readonly recorder: OutputRecorder) {}

  stream(name: StreamName, text: string): void {
    for (const change of this.recorder.stream(name, text)) {
      if (change.kind === "append") this.apply({ type: "cell-stream", cellId: CELL, name: change.name, text: change.text });
      else if (change.kind === "tail") this.tailDirty = true;
    }
  }

  output(output: CellOutput): void {
    this.flush();
    for (const change of this.recorder.output(output)) {
      if (change.kind === "output") this.apply({ type: "cell-output", cellId: CELL, output: change.output });
    }
  }

  flush(): void {
    if (!this.tailDirty) return;
    this.tailDirty = false;
    const r = this.recorder;
    this.apply({ type: "cell-stream-tail", cellId: CELL, elidedBytes: r.elided, tail: r.tailSegments(), headOutputs: r.headOutputs });
  }

  get outputs(): CellOutput[] {
    return this.doc.cells[0]!.outputs;
  }

  private apply(event: NotebookEvent): void {
    this.doc = applyServerEvent(this.doc, event);
  }
}

function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

describe("the reducer and the output budget", () => {
  it("agree after every flush, over random floods of stdout, stderr and rich outputs", () => {
    const budgets: OutputBudget[] = [
      { headChars: 50, tailChars: 20 },
      { headChars: 7, tailChars: 5 },
      { headChars: 100, tailChars: 100, richOutputChars: 12 },
    ];
    for (const [b, budget] of budgets.entries()) {
      for (let seed = 1; seed <= 40; seed++) {
        const next = random(seed * 31 + b);
        const viewer = new Viewer(new OutputRecorder(budget));
        for (let step = 0; step < 120; step++) {
          const what = next(20);
          if (what < 14) viewer.stream(what < 10 ? "stdout" : "stderr", String.fromCharCode(97 + (step % 26)).repeat(1 + next(30)));
          else if (what < 16) viewer.output({ kind: "display", data: { "text/plain": `d${step}`, "text/html": `<b>${"x".repeat(next(20))}</b>` } });
          else if (what < 17) viewer.output({ kind: "error", ename: "E", evalue: `v${step}`, traceback: ["a".repeat(next(9)), "b".repeat(next(9))] });
          // The runtime flushes on a timer: not after every write.
          if (what >= 17) {
            viewer.flush();
            assert.deepEqual(viewer.outputs, viewer.recorder.outputs(), `budget ${b}, seed ${seed}, step ${step}`);
          }
        }
        viewer.flush();
        assert.deepEqual(viewer.outputs, viewer.recorder.outputs(), `budget ${b}, seed ${seed}, at the end`);
      }
    }
  });

  it("keeps a rich output that arrived while overflowing when the tail after it changes", () => {
    const viewer = new Viewer(new OutputRecorder({ headChars: 2, tailChars: 2 }));
    viewer.stream("stdout", "abcdef");
    viewer.output({ kind: "error", ename: "E", evalue: "v", traceback: [] });
    viewer.stream("stdout", "ghij");
    viewer.flush();
    assert.deepEqual(viewer.outputs.map((o) => o.kind), ["stream", "elided", "stream", "error", "elided", "stream"]);
    assert.deepEqual(viewer.outputs, viewer.recorder.outputs());
  });

  it("shows no elided marker while nothing was elided, and keeps the tail apart from the head", () => {
    const viewer = new Viewer(new OutputRecorder({ headChars: 4, tailChars: 10 }));
    viewer.stream("stdout", "headtail");
    viewer.flush();
    assert.deepEqual(viewer.outputs, [
      { kind: "stream", name: "stdout", text: "head" },
      { kind: "stream", name: "stdout", text: "tail" },
    ]);
    assert.deepEqual(viewer.outputs, viewer.recorder.outputs());
  });
});
