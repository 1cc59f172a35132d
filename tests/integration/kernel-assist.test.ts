/**
 * Tab completion and Shift+Tab inspection through the real socket edge, a
 * real kernel and its live namespace: offsets converted between the editor's
 * UTF-16 and Python's code points, an immediate "unavailable" while a cell
 * runs (the editor falls back to words, never waits), no kernel started just
 * to complete, and a read-only viewer refused (asking runs user code).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NotebookAnswer } from "../../server/core/protocol/ops-notebook";
import { signIn } from "../helpers/lab-session";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 90_000 };
const PASSWORD = "correct horse battery staple";

function completion(ack: NotebookAnswer<"complete">) {
  assert.ok(ack.ok, ack.ok ? "" : ack.error);
  assert.ok(ack.completion, "the ack carries a completion");
  return ack.completion;
}

describe("kernel completion and inspection", () => {
  let harness: SocketHarness;
  let owner: TestClient;
  let notebookId: string;

  before(async () => {
    harness = await SocketHarness.start();
    owner = await harness.client();
    notebookId = await harness.createNotebook("assist");
    assert.ok((await owner.send({ op: "open", notebookId })).ok);
  });
  after(async () => {
    owner?.close();
    await harness?.close();
  });

  it("does not start a kernel to complete", LIMIT, async () => {
    const answer = completion(await owner.send({ op: "complete", notebookId, code: "pri", cursor: 3 }));
    assert.equal(answer.status, "unavailable");
    assert.equal((await harness.lab.hub.get(notebookId))?.kernel.status.state, "not-started");
  });

  it("completes from the live namespace, with UTF-16 offsets", LIMIT, async () => {
    await owner.send({ op: "insert-cell", notebookId, index: 0, cell: { id: "c1", kind: "code", source: "" } });
    assert.ok((await owner.run(notebookId, { c1: "import mgpulab as lab\nvalue_ß = 1" })).ok);
    await owner.waitFor((event) => event.type === "cell-finished" && event.cellId === "c1");

    const lab = completion(await owner.send({ op: "complete", notebookId, code: "lab.la", cursor: 6 }));
    assert.equal(lab.status, "ok");
    if (lab.status !== "ok") return;
    assert.ok(lab.matches.some((match) => match.text === "launch"), JSON.stringify(lab.matches));
    assert.deepEqual([lab.from, lab.to], [4, 6]);

    // The emoji is two UTF-16 units and one code point: offsets come back in the editor's units.
    const code = "s = '😀'; value_";
    const local = completion(await owner.send({ op: "complete", notebookId, code, cursor: code.length }));
    assert.equal(local.status, "ok");
    if (local.status !== "ok") return;
    assert.deepEqual(local.matches.map((match) => match.text), ["value_ß"]);
    assert.deepEqual([local.from, local.to], [code.indexOf("value_"), code.length]);
  });

  it("inspects the call around the cursor", LIMIT, async () => {
    const ack = await owner.send({ op: "inspect", notebookId, code: "lab.launch(1, ", cursor: 14 });
    assert.ok(ack.ok && ack.inspection?.status === "ok", JSON.stringify(ack));
    assert.equal(ack.inspection.found, true);
    assert.match(ack.inspection.text, /^Signature: lab\.launch\(target/);
  });

  it("answers unavailable at once while a cell runs", LIMIT, async () => {
    await owner.send({ op: "insert-cell", notebookId, index: 1, cell: { id: "c2", kind: "code", source: "" } });
    assert.ok((await owner.run(notebookId, { c2: "import time\ntime.sleep(4)" })).ok);
    await owner.waitFor((event) => event.type === "cell-run-state" && event.cellId === "c2" && event.runState === "running");
    const started = performance.now();
    const answer = completion(await owner.send({ op: "complete", notebookId, code: "lab.la", cursor: 6 }));
    assert.deepEqual(answer, { status: "unavailable", reason: "the kernel is running a cell" });
    assert.ok(performance.now() - started < 1_000, "answered without waiting for the cell");
    await owner.waitFor((event) => event.type === "cell-finished" && event.cellId === "c2");
  });

  it("stores a tqdm progress bar as the one line a terminal shows", LIMIT, async () => {
    await owner.send({ op: "insert-cell", notebookId, index: 2, cell: { id: "c3", kind: "code", source: "" } });
    assert.ok((await owner.run(notebookId, { c3: "from tqdm import tqdm\nfor i in tqdm(range(300), mininterval=0):\n    pass\nprint('done')" })).ok);
    await owner.waitFor((event) => event.type === "cell-finished" && event.cellId === "c3");
    const cell = (await harness.lab.hub.get(notebookId))?.doc.cells.find((each) => each.id === "c3");
    const text = cell?.outputs.map((output) => (output.kind === "stream" ? output.text : "")).join("") ?? "";
    assert.equal(text.match(/%\|/g)?.length, 1, JSON.stringify(text.slice(0, 500)));
    assert.match(text, /100%\|/);
    assert.match(text, /done/);
  });

  it("refuses a viewer who may only read the notebook", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Reader", email: "reader@example.com", password: PASSWORD, role: "member" });
    const shared = await owner.sendLab({ op: "share-notebook", notebookId, email: user.email, access: "read" });
    assert.ok(shared.ok, shared.ok ? "" : shared.error);
    const reader = await harness.client(await signIn(harness.url, user.email, PASSWORD));
    try {
      const opened = await reader.send({ op: "open", notebookId });
      assert.ok(opened.ok && opened.access === "read");
      for (const command of [
        { op: "complete", notebookId, code: "lab.la", cursor: 6 },
        { op: "inspect", notebookId, code: "lab.launch", cursor: 5 },
      ]) {
        const ack = await reader.send(command);
        assert.equal(ack.ok, false, `${command.op} was answered for a reader`);
        // The gate's one refusal for a notebook: as for an id that does not exist.
        if (!ack.ok) assert.equal(ack.code, "not-found");
      }
    } finally {
      reader.close();
    }
  });
});
