/**
 * A lab server that is stopping takes nothing more: a command that reaches
 * a notebook it is letting go is refused as "unavailable", in words, instead
 * of being answered ok and never stored (its writes would come after the
 * last flush). Found by the chaos run: a Run sent to a server during its
 * SIGTERM was acknowledged, and the database never had its execution.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LEAVING } from "../../server/notebook/notebook-runtime";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

describe("a lab server that is stopping", () => {
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

  it("refuses a Run on a notebook it is letting go, and opens no notebook again, so no answer is left unstored", { timeout: 120_000 }, async () => {
    const created = await client.sendLab({ op: "create-notebook", title: "stopping" });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const cellId = opened.notebook.cells[0]!.id;
    assert.ok((await client.run(notebookId, { [cellId]: "print('first')" })).ok);
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);

    const runtime = await harness.lab.hub.get(notebookId);
    assert.ok(runtime);
    harness.lab.hub.stopOpening();
    const leaving = runtime.dispose("the test stops the server");
    const refused = await client.send({ op: "execute", notebookId, cellIds: [cellId] });
    assert.deepEqual(refused, { ok: false, code: "unavailable", error: LEAVING });
    await leaving;
    const reopened = await client.send({ op: "open", notebookId });
    assert.deepEqual(reopened, { ok: false, code: "unavailable", error: LEAVING }, "a stopping server opens nothing again");

    const stored = await harness.lab.catalog.repos.notebooks.load(notebookId);
    assert.equal(stored.cells[0]!.executionCount, 1, "only the first Run was stored, and answered");
  });
});
