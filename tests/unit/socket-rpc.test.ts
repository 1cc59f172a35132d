/** One request over a real socket.io link: the op's own answer, the server's refusal, or the fact that none came. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { answerOf, isLost, NO_ANSWER, NOT_CONNECTED, requestLab, requestNotebook, type NotebookSocket } from "../../components/shell/model/socket-rpc";
import { MAX_MESSAGE_BYTES } from "../../server/core/limits";
import { BareSocketServer } from "../helpers/bare-socket-server";

describe("socket RPC", () => {
  let server: BareSocketServer;
  let socket: NotebookSocket;
  before(async () => {
    server = await BareSocketServer.start();
    socket = server.client();
    await new Promise<void>((resolve) => socket.once("connect", resolve));
  });
  after(async () => {
    socket.disconnect();
    await server.close();
  });

  it("resolves with the op's answer, or the server's refusal as sent", async () => {
    server.notebook = () => ({ ok: true });
    assert.deepEqual(await requestNotebook(socket, { op: "interrupt", notebookId: "nb" }, 5_000), { ok: true });
    server.notebook = () => ({ ok: false, error: "no kernel", code: "conflict" });
    assert.deepEqual(await requestNotebook(socket, { op: "interrupt", notebookId: "nb" }, 5_000), { ok: false, error: "no kernel", code: "conflict" });
    server.lab = () => ({ ok: true, hosts: [] });
    const hosts = await requestLab(socket, { op: "list-hosts" }, 5_000);
    assert.deepEqual(hosts.ok ? hosts.hosts : null, []);
  });

  it("says no answer came when the server stays silent, and 'not connected' without a socket", async () => {
    server.notebook = () => undefined;
    const silent = await requestNotebook(socket, { op: "interrupt", notebookId: "nb" }, 50);
    assert.equal(isLost(silent), true);
    assert.deepEqual(answerOf(silent), { ok: false, error: NO_ANSWER, code: "unavailable" });
    server.lab = () => undefined;
    assert.deepEqual(await requestLab(socket, { op: "list-hosts" }, 50), { ok: false, error: NO_ANSWER, code: "unavailable" });
    assert.deepEqual(answerOf(await requestNotebook(null, { op: "interrupt", notebookId: "nb" }, 50)), { ok: false, error: NOT_CONNECTED, code: "unavailable" });
    assert.deepEqual(await requestLab(null, { op: "list-hosts" }, 50), { ok: false, error: NOT_CONNECTED, code: "unavailable" });
  });

  it("refuses here a command past the transport's cap, with the reason, sending nothing", async () => {
    let heard = 0;
    server.notebook = () => (heard++, { ok: true });
    const huge = "x".repeat(MAX_MESSAGE_BYTES + 1);
    const reply = await requestNotebook(socket, { op: "set-source", notebookId: "nb", cellId: "a", source: huge }, 5_000);
    assert.equal(reply.ok ? null : reply.code, "too-large");
    assert.equal(heard, 0);
  });
});
