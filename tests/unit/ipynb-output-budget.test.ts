/**
 * The output budget on imported files, without a database: stream text cut
 * exactly as the live recorder cuts it, oversized rich outputs reduced with a
 * marker, notes that say what went, and the concurrency gate for large files.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toIpynb } from "../../server/ipynb/export";
import { ImportGate } from "../../server/ipynb/import-gate";
import { parseIpynb } from "../../server/ipynb/import";
import { IPYNB_LIMITS, type IpynbLimits } from "../../server/ipynb/limits";
import { DEFAULT_OUTPUT_BUDGET, OutputRecorder } from "../../server/notebook/output-recorder";
import type { CellOutput } from "../../server/core/protocol/notebook-model";

const notebookWith = (outputs: unknown[]) =>
  JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", id: "c", metadata: {}, execution_count: 1, source: "run()", outputs }] });

/** What the live recorder keeps of the same text, written in the given pieces. */
function live(pieces: Array<["stdout" | "stderr", string]>, budget = DEFAULT_OUTPUT_BUDGET): CellOutput[] {
  const recorder = new OutputRecorder(budget);
  for (const [name, text] of pieces) recorder.stream(name, text);
  return recorder.outputs();
}

const lines = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix} ${String(i).padStart(7, "0")} ${"█".repeat(i % 20)}\n`);

describe("imported outputs under the live output budget", () => {
  it("keeps the same head, tail and elided count as a live run of the same text", () => {
    const text = lines(40_000, "step");
    const imported = parseIpynb(notebookWith([{ output_type: "stream", name: "stdout", text }]));
    const outputs = imported.cells[0]!.outputs!;
    assert.deepEqual(outputs, live([["stdout", text.join("")]]));
    assert.deepEqual(outputs.map((output) => output.kind), ["stream", "elided", "stream"]);
    const total = text.join("").length;
    const elided = total - DEFAULT_OUTPUT_BUDGET.headChars - DEFAULT_OUTPUT_BUDGET.tailChars;
    assert.deepEqual(outputs[1], { kind: "elided", elidedBytes: elided });
    assert.deepEqual(imported.notes, [
      `cells[0]: elided to the lab's output budget: ${elided.toLocaleString("en-US")} characters of stream text (the first 262,144 and the last 65,536 are kept, as for a live run)`,
    ]);
  });

  it("merges consecutive outputs of a stream and interleaves stdout and stderr as a live run does", () => {
    const out = lines(12_000, "out");
    const err = lines(9_000, "err");
    const pieces: Array<["stdout" | "stderr", string]> = [
      ["stdout", out.slice(0, 6000).join("")],
      ["stdout", out.slice(6000).join("")],
      ["stderr", err.join("")],
      ["stdout", "the end\n"],
    ];
    const file = pieces.map(([name, text]) => ({ output_type: "stream", name, text }));
    assert.deepEqual(parseIpynb(notebookWith(file)).cells[0]!.outputs, live(pieces));
  });

  it("keeps small outputs as they are, and an exported budgeted cell imports back unchanged", () => {
    const small = [{ output_type: "stream", name: "stdout", text: ["a\n", "b\n"] }, { output_type: "execute_result", execution_count: 1, metadata: {}, data: { "text/plain": "3" } }];
    const first = parseIpynb(notebookWith(small));
    assert.deepEqual(first.cells[0]!.outputs, [{ kind: "stream", name: "stdout", text: "a\nb\n" }, { kind: "result", executionCount: 1, data: { "text/plain": "3" } }]);
    assert.deepEqual(first.notes, []);

    const big = parseIpynb(notebookWith([{ output_type: "stream", name: "stdout", text: lines(30_000, "x") }, { output_type: "error", ename: "E", evalue: "v", traceback: ["t"] }, { output_type: "stream", name: "stdout", text: lines(30_000, "y") }]));
    const exported = toIpynb({ title: "t", cells: big.cells.map((cell) => ({ outputs: [], executionCount: null, lastRun: null, template: null, ...cell })) });
    const again = parseIpynb(exported);
    assert.deepEqual(again.cells[0]!.outputs, big.cells[0]!.outputs);
    assert.deepEqual(again.notes, [], "nothing more to elide the second time");
  });

  it("reduces a rich output over the budget to its small forms, with a marker counting the rest", () => {
    const limits: IpynbLimits = { ...IPYNB_LIMITS, outputBudget: { ...DEFAULT_OUTPUT_BUDGET, richOutputChars: 1000 } };
    const png = "A".repeat(5000);
    const imported = parseIpynb(
      notebookWith([
        { output_type: "display_data", metadata: {}, data: { "image/png": png, "text/plain": ["<Figure>"] } },
        { output_type: "execute_result", execution_count: 2, metadata: {}, data: { "text/html": ["<b>", "x".repeat(2000), "</b>"] } },
        { output_type: "error", ename: "RecursionError", evalue: "deep", traceback: [...Array.from({ length: 50 }, (_, i) => `frame ${i} ${"-".repeat(40)}`), "RecursionError: deep"] },
        { output_type: "display_data", metadata: {}, data: { "image/png": "small" } },
      ]),
      limits,
    );
    const outputs = imported.cells[0]!.outputs!;
    assert.deepEqual(outputs.slice(0, 3), [
      { kind: "display", data: { "text/plain": "<Figure>" } },
      { kind: "elided", elidedBytes: 5000 },
      { kind: "elided", elidedBytes: 2007 },
    ]);
    const traceback = [...Array.from({ length: 50 }, (_, i) => `frame ${i} ${"-".repeat(40)}`), "RecursionError: deep"];
    const error = outputs[3];
    assert.ok(error?.kind === "error" && error.ename === "RecursionError" && error.evalue === "deep");
    assert.deepEqual(error.traceback, traceback.slice(traceback.length - error.traceback.length), "the last traceback lines are the ones kept");
    const keptChars = "RecursionErrordeep".length + error.traceback.join("").length;
    assert.ok(error.traceback.length < traceback.length && keptChars <= 1000);
    assert.deepEqual(outputs[4], { kind: "elided", elidedBytes: "RecursionErrordeep".length + traceback.join("").length - keptChars });
    assert.deepEqual(outputs[5], { kind: "display", data: { "image/png": "small" } });
    assert.equal(imported.notes.length, 1);
    assert.match(imported.notes[0]!, /^cells\[0\]: elided to the lab's output budget: outputs\[0\] image\/png \(5,000 characters\), outputs\[1\] text\/html \(2,007 characters\), outputs\[2\] the first \d+ traceback lines of RecursionError \(a rich output keeps at most 1,000 characters\)$/);
  });

  it("the live budget by default: rich outputs of the live recorder stay whole", () => {
    const recorder = new OutputRecorder();
    const huge: CellOutput = { kind: "display", data: { "image/png": "A".repeat(3 * 1024 * 1024) } };
    recorder.output(huge);
    assert.deepEqual(recorder.outputs(), [huge]);
  });
});

describe("ImportGate", () => {
  it("lets small files through together and large ones one at a time, first come first served", async () => {
    const gate = new ImportGate(100);
    const order: string[] = [];
    const a = await gate.acquire(60);
    order.push("a");
    const b = gate.acquire(60).then((release) => (order.push("b"), release));
    const c = gate.acquire(10).then((release) => (order.push("c"), release));
    await Promise.resolve();
    assert.deepEqual(order, ["a"], "b does not fit beside a, and c waits behind b");
    a();
    const releaseB = await b;
    const releaseC = await c;
    assert.deepEqual(order, ["a", "b", "c"]);
    releaseB();
    releaseC();
    releaseC(); // twice is harmless
    const huge = await gate.acquire(10_000); // larger than the gate: admitted alone
    const next = gate.acquire(1).then(() => order.push("next"));
    await Promise.resolve();
    assert.equal(order.at(-1), "c");
    huge();
    await next;
    assert.equal(order.at(-1), "next");
  });
});
