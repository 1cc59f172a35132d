/** Huge output: bounded memory on the server and in what viewers receive, the right tail, and interrupt while flooding. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_OUTPUT_BUDGET } from "../../server/notebook/output-recorder";
import { TestNotebook } from "../helpers/test-notebook";

const LIMIT = { timeout: 180_000 };
const LINE = 1000; // bytes per printed line, newline included
const LINES = 100_000; // 100 MB

describe("a cell printing 100 MB", () => {
  let notebook: TestNotebook;
  before(() => {
    notebook = new TestNotebook();
  });
  after(async () => {
    await notebook.close();
  });

  it("ends with the right tail, says how much was elided, and keeps server memory bounded", LIMIT, async () => {
    let streamedChars = 0;
    let largestTail = 0;
    let peakHeapGrowth = 0;
    const baseline = process.memoryUsage().heapUsed;
    notebook.observe((event) => {
      if (event.type === "cell-stream") streamedChars += event.text.length;
      if (event.type === "cell-stream-tail") largestTail = Math.max(largestTail, event.tail.reduce((sum, segment) => sum + segment.text.length, 0));
      peakHeapGrowth = Math.max(peakHeapGrowth, process.memoryUsage().heapUsed - baseline);
    });
    const cellId = await notebook.addCell(
      `import sys\nfor i in range(${LINES}):\n    sys.stdout.write(f"{i:08d} " + "x" * ${LINE - 10} + "\\n")\nprint("THE END")`,
    );
    const finished = await notebook.run(cellId);
    assert.equal(finished.status, "ok");

    const outputs = notebook.cell(cellId).outputs;
    const elided = outputs.find((output) => output.kind === "elided");
    assert.ok(elided && elided.kind === "elided");
    const kept = outputs.reduce((sum, output) => sum + (output.kind === "stream" ? output.text.length : 0), 0);
    assert.equal(kept + elided.elidedBytes, LINES * LINE + "THE END\n".length, "kept + elided accounts for every byte");
    assert.ok(kept <= DEFAULT_OUTPUT_BUDGET.headChars + DEFAULT_OUTPUT_BUDGET.tailChars);

    const last = outputs[outputs.length - 1];
    assert.ok(last && last.kind === "stream");
    assert.match(last.text, new RegExp(`${String(LINES - 1).padStart(8, "0")} x{${LINE - 10}}\\nTHE END\\n$`));
    const first = outputs[0];
    assert.ok(first && first.kind === "stream" && first.text.startsWith(`00000000 ${"x".repeat(LINE - 10)}\n00000001`));

    assert.ok(streamedChars <= DEFAULT_OUTPUT_BUDGET.headChars, `viewers got ${streamedChars} chars of appends`);
    assert.ok(largestTail <= DEFAULT_OUTPUT_BUDGET.tailChars, `a tail update carried ${largestTail} chars`);
    // 100 MB passed through; if it were kept the heap would grow by at least that.
    assert.ok(peakHeapGrowth < 60 * 1024 * 1024, `heap grew by ${(peakHeapGrowth / 1e6).toFixed(1)} MB`);
  });

  it("stays responsive to interrupt while flooding", LIMIT, async () => {
    const cellId = await notebook.addCell('while True:\n    print("y" * 200)');
    const flooding = notebook.waitFor((event) => event.type === "cell-stream-tail" && event.cellId === cellId);
    const finished = notebook.run(cellId);
    await flooding;
    await notebook.runtime.handle({ op: "interrupt", notebookId: notebook.notebookId }, "test");
    const result = await finished;
    assert.equal(result.status, "interrupted");
    const check = await notebook.addCell("1 + 1");
    assert.equal((await notebook.run(check)).status, "ok");
    const outputs = notebook.cell(check).outputs;
    assert.deepEqual(outputs, [{ kind: "result", executionCount: notebook.cell(check).executionCount, data: { "text/plain": "2" } }]);
  });
});
