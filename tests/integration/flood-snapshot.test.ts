/**
 * A flooding cell, on a real kernel: what a viewer watching the run was
 * shown (every event, applied with the reducer) is exactly what a viewer
 * joining afterwards gets (the server's document), and both are the output
 * budget's head, elided count and tail, with a rich output printed in the
 * middle of the flood kept in its place.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { applyServerEvent } from "../../server/core/notebook/notebook-state";
import type { CellOutput, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { OutputBudget } from "../../server/notebook/output-recorder";
import { TestNotebook } from "../helpers/test-notebook";

const LIMIT = { timeout: 120_000 };
const BUDGET: OutputBudget = { headChars: 1_000, tailChars: 500 };

/** Lines of `text` numbered from 0: "<prefix>00000\n" is 7 characters. */
function numbered(prefix: string, lines: number): string {
  let text = "";
  for (let i = 0; i < lines; i++) text += `${prefix}${String(i).padStart(5, "0")}\n`;
  return text;
}

const stream = (text: string): CellOutput => ({ kind: "stream", name: "stdout", text });

describe("a flooding cell", () => {
  let notebook: TestNotebook;
  before(() => {
    notebook = new TestNotebook({ outputBudget: BUDGET });
  });
  after(async () => {
    await notebook.close();
  });

  /** Runs `code` in a new cell: the outputs a viewer that watched it was shown, and those a viewer joining after it gets. */
  async function watchAndJoin(code: string): Promise<{ cellId: string; watched: CellOutput[]; joined: CellOutput[] }> {
    const cellId = await notebook.addCell(code);
    const start = await notebook.runtime.join();
    assert.ok(start.notebook && start.journal);
    let watched: NotebookDocument = start.notebook;
    const from = start.journal.seq;
    notebook.observe((event, seq) => {
      if (seq > from) watched = applyServerEvent(watched, event);
    });
    const finished = await notebook.run(cellId);
    assert.equal(finished.status, "ok");
    const late = await notebook.runtime.join();
    assert.ok(late.notebook);
    const outputsOf = (doc: NotebookDocument) => doc.cells.find((cell) => cell.id === cellId)?.outputs ?? [];
    return { cellId, watched: outputsOf(watched), joined: outputsOf(late.notebook) };
  }

  it("shows a watching viewer and a joining viewer the same head, elided count, tail, and the rich output printed mid-flood", LIMIT, async () => {
    const before = numbered("a", 2_000);
    const afterwards = numbered("b", 3_000);
    const { watched, joined } = await watchAndJoin(
      `import sys\nsys.stdout.write(${JSON.stringify(before)})\ndisplay("middle")\n_ = sys.stdout.write(${JSON.stringify(afterwards)})`,
    );
    assert.deepEqual(watched, joined);
    assert.deepEqual(joined, [
      stream(before.slice(0, BUDGET.headChars)),
      { kind: "elided", elidedBytes: before.length - BUDGET.headChars - BUDGET.tailChars },
      stream(before.slice(-BUDGET.tailChars)),
      { kind: "display", data: { "text/plain": "'middle'" } },
      { kind: "elided", elidedBytes: afterwards.length - BUDGET.tailChars },
      stream(afterwards.slice(-BUDGET.tailChars)),
    ]);
  });

  it("shows no elided marker when the overflow still fits the tail", LIMIT, async () => {
    const text = numbered("c", 200); // 1,400 characters: 1,000 of head and 400 of tail
    const { watched, joined } = await watchAndJoin(`import sys\n_ = sys.stdout.write(${JSON.stringify(text)})`);
    assert.deepEqual(watched, joined);
    assert.deepEqual(joined, [stream(text.slice(0, BUDGET.headChars)), stream(text.slice(BUDGET.headChars))]);
  });
});
