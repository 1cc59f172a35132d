/** Every refusal the server sends carries a code, on the socket and over HTTP, with its message as it was. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 90_000 };

describe("error codes", () => {
  let harness: SocketHarness;
  let client: TestClient;
  let notebookId = "";
  before(async () => {
    harness = await SocketHarness.start();
    notebookId = await harness.createNotebook();
    client = await harness.client();
  });
  after(async () => {
    client.close();
    await harness.close();
  });

  it("a notebook that does not exist: not-found, which the page takes as final", LIMIT, async () => {
    const ack = await client.send({ op: "open", notebookId: "nosuchnotebook" });
    assert.ok(!ack.ok);
    assert.equal(ack.code, "not-found");
    assert.match(ack.error, /nosuchnotebook not found/);
  });

  it("a malformed command, or one for a notebook not opened: invalid", LIMIT, async () => {
    const malformed = await client.send({ op: "open", notebookId: "../etc" });
    assert.ok(!malformed.ok);
    assert.equal(malformed.code, "invalid");
    assert.match(malformed.error, /^invalid command: notebookId:/);
    const notOpened = await client.send({ op: "interrupt", notebookId });
    assert.ok(!notOpened.ok);
    assert.equal(notOpened.code, "invalid");
  });

  it("an id that exists, a stale edit: conflict; a running cell: busy", LIMIT, async () => {
    assert.ok((await client.send({ op: "open", notebookId })).ok);
    const duplicate = await client.send({ op: "insert-cell", notebookId, index: 0, cell: { id: "cell-1", kind: "code", source: "" } });
    assert.ok(!duplicate.ok);
    assert.equal(duplicate.code, "conflict");

    assert.ok((await client.send({ op: "set-source", notebookId, cellId: "cell-1", source: "import time\ntime.sleep(30)" })).ok);
    const stale = await client.send({ op: "set-source", notebookId, cellId: "cell-1", source: "mine", baseHash: sourceHash("an older text") });
    assert.ok(!stale.ok);
    assert.equal(stale.code, "conflict");
    assert.deepEqual(stale.conflict, { cellId: "cell-1", theirSource: "import time\ntime.sleep(30)" });

    assert.deepEqual(await client.send({ op: "execute", notebookId, cellIds: ["cell-1"] }), { ok: true });
    await client.waitFor((event) => event.type === "cell-run-state" && event.cellId === "cell-1" && event.runState === "running");
    const busy = await client.send({ op: "delete-cell", notebookId, cellId: "cell-1" });
    assert.ok(!busy.ok);
    assert.equal(busy.code, "busy");
    assert.equal(busy.error, "a queued or running cell cannot be deleted; interrupt it first");
    assert.deepEqual(await client.send({ op: "interrupt", notebookId }), { ok: true });
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === "cell-1");
  });

  it("an unknown scenario is not-found, a value the catalog refuses is invalid", LIMIT, async () => {
    const unknown = await client.sendLab({ op: "create-from-scenario", scenarioId: "no-such-scenario" });
    assert.ok(!unknown.ok);
    assert.equal(unknown.code, "not-found");
    const [scenario] = (await harness.lab.scenarios.list()).slice(0, 1);
    assert.ok(scenario);
    const bad = await client.sendLab({ op: "create-from-scenario", scenarioId: scenario.id, params: { no_such_parameter: 1 } });
    assert.ok(!bad.ok);
    assert.equal(bad.code, "invalid");
  });

  it("over HTTP the body says the code and the status follows from it", LIMIT, async () => {
    const missing = await labFetch(`${harness.url}/api/executions/nosuchexecution/metrics`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: "execution nosuchexecution not found", code: "not-found" });
    const wrongMethod = await labFetch(`${harness.url}/api/executions`, { method: "DELETE", headers: { "Content-Type": "application/json" } });
    assert.equal(wrongMethod.status, 405);
    assert.deepEqual(await wrongMethod.json(), { error: "use GET", code: "invalid" });
  });
});
