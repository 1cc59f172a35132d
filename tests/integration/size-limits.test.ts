/**
 * Size limits that agree with each other, against the real server process:
 * "Run all" on several large cells runs from stored sources (ids on the
 * wire, not text), the largest cell the protocol allows saves even at its
 * worst JSON escaping, and a larger one gets a clear error on a connection
 * that stays up.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_MESSAGE_BYTES, MAX_SOURCE_CHARS } from "../../server/core/limits";
import { messageTooLarge } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 180_000 };

describe("size limits", () => {
  let server: LabServer;
  let client: TestClient;
  let notebookId: string;

  before(async () => {
    server = await LabServer.start();
    client = await connectClient(server.url);
    const created = await client.sendLab({ op: "create-notebook", title: "big cells" });
    assert.ok(created.ok && created.notebook);
    notebookId = created.notebook.id;
    assert.ok((await client.send({ op: "open", notebookId })).ok);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it("runs all of five cells of about 900 K characters each, from their stored sources", LIMIT, async () => {
    const ids = ["big1", "big2", "big3", "big4", "big5"];
    for (const [index, id] of ids.entries()) {
      const source = `s = '${"x".repeat(900_000)}'\nprint('${id}', len(s))`;
      assert.ok((await client.send({ op: "insert-cell", notebookId, index: index + 1, cell: { id, kind: "code", source } })).ok);
    }
    const run = { op: "execute", notebookId, cellIds: ids };
    assert.equal(messageTooLarge(run), null);
    assert.ok(JSON.stringify(run).length < 1_000, "a run carries ids, not sources");
    const ran = await client.send(run);
    assert.deepEqual(ran, { ok: true });
    for (const id of ids) {
      const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === id);
      assert.equal(finished.type === "cell-finished" && finished.status, "ok", id);
    }
    const printed = client.events.filter((event) => event.type === "cell-stream").map((event) => (event.type === "cell-stream" ? event.text : "")).join("");
    for (const id of ids) assert.ok(printed.includes(`${id} 900000\n`), id);
    assert.ok(client.socket.connected);
  });

  it("saves the largest cell the protocol allows even at 6 bytes a character, and refuses one character more without dropping the socket", LIMIT, async () => {
    assert.ok((await client.send({ op: "insert-cell", notebookId, index: 0, cell: { id: "ctrl", kind: "code", source: "" } })).ok);
    const worst = "\u0001".repeat(MAX_SOURCE_CHARS);
    const save = { op: "set-source", notebookId, cellId: "ctrl", source: worst };
    assert.ok(Buffer.byteLength(JSON.stringify(save)) > 6_000_000 && Buffer.byteLength(JSON.stringify(save)) < MAX_MESSAGE_BYTES);
    assert.deepEqual(await client.send(save), { ok: true });
    const reopened = await client.send({ op: "open", notebookId });
    assert.ok(reopened.ok && reopened.notebook);
    assert.equal(reopened.notebook.cells.find((cell) => cell.id === "ctrl")?.source.length, MAX_SOURCE_CHARS);

    const tooLong = await client.send({ ...save, source: `${worst}\u0001` });
    assert.equal(tooLong.ok, false);
    assert.match(tooLong.ok ? "" : tooLong.error, /at most 1000000 characters/);
    assert.ok(client.socket.connected, "the connection stays up");
    assert.deepEqual(await client.send({ op: "open", notebookId }).then((ack) => ack.ok), true);
  });

  it("refuses to send a message past the transport's cap, with the reason, before it reaches the socket", () => {
    const reason = messageTooLarge({ op: "set-source", notebookId: "nb", cellId: "c", source: "\u0001".repeat(MAX_SOURCE_CHARS * 1.5) });
    assert.match(reason ?? "", /over the \d+ MiB a message may carry; a cell holds at most 1,000,000 characters/);
    assert.equal(messageTooLarge({ op: "set-source", notebookId: "nb", cellId: "c", source: "é".repeat(MAX_SOURCE_CHARS) }), null);
  });
});
