/** Running the kernel: what a run sends, what stops it, and when a restart asks first. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { NotebookRuns, RESTART_QUESTION } from "../../components/notebook/model/notebook-runs";
import type { CellConflicts } from "../../components/notebook/model/connection";
import { newCell } from "../../server/core/notebook/notebook-state";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { idleKernel, notebookPieces, testDoc } from "../helpers/notebook-pieces";

function setup(access: NotebookAccessLevel = "run", answer = true) {
  const pieces = notebookPieces(access, null);
  pieces.view.snapshot(testDoc([newCell("a", "code", "x = 1"), newCell("m", "markdown", "# m"), newCell("c", "code", "y")], idleKernel));
  let conflicts: CellConflicts = {};
  const asked: string[] = [];
  const notify = (message: string): void => pieces.store.update({ notices: [...pieces.store.getState().notices, { id: 0, message }] });
  const runs = new NotebookRuns({
    notebookId: "nb",
    store: pieces.store,
    sender: pieces.sender,
    conflicts: () => conflicts,
    notify,
    confirm: (question) => (asked.push(question), answer),
  });
  return { ...pieces, runs, asked, conflict: (next: CellConflicts) => (conflicts = next) };
}

describe("NotebookRuns", () => {
  it("runs the code cells asked for, each with the hash of the text shown; Run all leaves out the cells the page hides", async () => {
    const { runs, transport } = setup();
    await runs.run(["a", "m"]);
    runs.setUnshownCells(new Set(["c"]));
    await runs.runAll();
    assert.deepEqual(transport.sent, [
      { op: "execute", notebookId: "nb", cellIds: ["a"], sourceHashes: { a: sourceHash("x = 1") } },
      { op: "execute", notebookId: "nb", cellIds: ["a"], sourceHashes: { a: sourceHash("x = 1") } },
    ]);
  });

  it("sends nothing for markdown only, nor while a cell to run waits on a conflict (and says so)", async () => {
    const { runs, transport, conflict, notices } = setup();
    assert.equal(await runs.run(["m"]), null);
    conflict({ a: { theirSource: "z" } });
    assert.equal(await runs.run(["a"]), null);
    assert.deepEqual(transport.ops, []);
    assert.equal(notices().length, 1);
  });

  it("asks before a restart that would lose a live kernel's state, and restarts only on yes", () => {
    const no = setup("run", false);
    no.runs.requestRestart();
    assert.deepEqual(no.asked, [RESTART_QUESTION]);
    assert.deepEqual(no.transport.ops, []);
    const yes = setup("run", true);
    yes.runs.requestRestart();
    assert.deepEqual(yes.transport.ops, ["restart"]);
    const reader = setup("read");
    reader.runs.requestRestart();
    assert.deepEqual([reader.asked, reader.transport.ops], [[], []], "a reader is not even asked");
  });

  it("answers a kernel spec change with the refusal in words (the viewer's or the server's), null when taken", async () => {
    assert.equal(await setup("run").runs.setKernelSpec("h", 1), "This notebook is shared with you: it cannot be changed from here");
    const owner = setup("edit");
    assert.equal(await owner.runs.setKernelSpec("h", 1), null);
    owner.transport.answers.set("set-kernel-spec", { refuse: "no host h" });
    assert.equal(await owner.runs.setKernelSpec("h", 1), "no host h");
    assert.deepEqual(owner.notices(), [], "the form shows it, not a notice");
  });

  it("keeps the last host list when listing fails", async () => {
    const { runs, transport, store } = setup();
    transport.answers.set("list-hosts", { reply: { hosts: [] } });
    await runs.loadHosts();
    assert.deepEqual(store.getState().hosts, []);
    transport.answers.set("list-hosts", { refuse: "database away" });
    await runs.loadHosts();
    assert.deepEqual(store.getState().hosts, []);
  });
});
