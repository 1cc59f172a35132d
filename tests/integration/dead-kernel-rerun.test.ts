/**
 * A notebook whose kernel was killed from outside (kill -9, the OOM killer): the next Run starts a new kernel,
 * as Jupyter restarts a kernel that died, and the cell says so before its own output — never a cell that
 * fails as "kernel-died" in 0 ms every time until someone finds the Restart button (issue 31).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { shownText, storedText } from "../helpers/cell-text";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("a run after the kernel died", () => {
  let harness: SocketHarness;
  let client: TestClient;
  before(async () => {
    harness = await SocketHarness.start();
    client = await harness.client();
  });
  after(async () => {
    client?.close();
    await harness?.close();
  });

  it("starts a new kernel, says so in the cell, and the cell runs", LIMIT, async () => {
    const notebookId = await harness.createNotebook("killed kernel");
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const cellId = opened.notebook.cells[0]!.id;
    const first = await client.run(notebookId, { [cellId]: "import os\nkept = 41\nprint(os.getpid())" });
    assert.ok(first.ok);
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
    const pid = Number(/\d+/.exec(shownText(client.events, cellId))?.[0]);
    assert.ok(pid > 0, "the kernel's pid");

    process.kill(pid, "SIGKILL");
    await client.waitFor((event) => event.type === "kernel-status" && event.status.state === "dead");
    const before = client.events.length;
    const again = await client.run(notebookId, { [cellId]: "print('kept' in dir())" });
    assert.ok(again.ok);
    const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.indexOf(event) >= before);
    assert.equal(finished.type === "cell-finished" && finished.status, "ok", "the cell ran on a new kernel");
    const shown = shownText(client.events.slice(before), cellId);
    assert.match(shown, /\[kernel\] The previous kernel stopped \(.*SIGKILL.*\)\. Running this cell started a new one/);
    assert.match(shown, /False/, "a new namespace: what was defined before is gone");
    const stored = await client.send({ op: "open", notebookId });
    assert.ok(stored.ok && stored.notebook);
    assert.match(storedText(stored.notebook, cellId), /The previous kernel stopped/, "the notice is stored with the cell");
  });
});
