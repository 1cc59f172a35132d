/**
 * The one way the notebook page sends an op: the viewer's access is checked
 * against the op table's need, a refusal becomes a notice in the op's words
 * or goes to the caller, and nothing is sent that this viewer may not send.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describe as describeOp, quietly } from "../../components/notebook/model/notebook-sender";
import { notebookPieces } from "../helpers/notebook-pieces";

describe("NotebookSender", () => {
  it("sends what the viewer may, and a server's refusal becomes a notice in the op's words", async () => {
    const { sender, transport, notices } = notebookPieces("run");
    assert.equal((await sender.send({ op: "interrupt", notebookId: "nb" }))?.ok, true);
    transport.answers.set("restart", { refuse: "the kernel is starting" });
    const refused = await sender.send({ op: "restart", notebookId: "nb" });
    assert.deepEqual(refused !== null && !refused.ok ? refused.error : null, "the kernel is starting");
    assert.deepEqual(transport.ops, ["interrupt", "restart"]);
    assert.deepEqual(notices(), ["Restart failed: the kernel is starting"]);
  });

  it("hands the refusal to the caller instead when it asks (a form shows it under its fields)", async () => {
    const { sender, transport, notices } = notebookPieces("edit");
    transport.answers.set("set-parameters", { refuse: "lr must be > 0" });
    const heard: string[] = [];
    await sender.send({ op: "set-parameters", notebookId: "nb", cellId: "a", values: {} }, (error) => heard.push(error));
    assert.deepEqual(heard, ["lr must be > 0"]);
    assert.deepEqual(notices(), []);
  });

  it("sends nothing the viewer may not, says why once the notebook shows, and stays quiet while it opens", async () => {
    const { sender, transport, notices } = notebookPieces("read");
    assert.equal(await sender.send({ op: "execute", notebookId: "nb", cellIds: ["a"], sourceHashes: {} }), null);
    assert.deepEqual(notices(), ["This notebook is shared with you read-only: it cannot be run from here"]);
    const opening = notebookPieces(null, null);
    assert.equal(await opening.sender.send({ op: "interrupt", notebookId: "nb" }), null);
    assert.deepEqual(opening.notices(), []);
    assert.deepEqual([...transport.ops, ...opening.transport.ops], []);
    assert.equal(sender.refusal("edit"), "This notebook is shared with you: it cannot be changed from here");
    assert.equal(sender.refusal("read"), null);
  });

  it("answers a lab op this viewer may not send itself, as the server would, and lets any viewer list", async () => {
    const { sender, transport } = notebookPieces("run");
    const rename = await sender.sendLab({ op: "rename-notebook", notebookId: "nb", title: "x" }, quietly);
    assert.deepEqual(rename.ok ? null : rename.code, "forbidden");
    transport.answers.set("list-hosts", { reply: { hosts: [] } });
    const hosts = await sender.sendLab({ op: "list-hosts" }, quietly);
    assert.deepEqual(hosts.ok ? hosts.hosts : null, []);
    assert.deepEqual(transport.ops, ["list-hosts"]);
  });

  it("turns any failure of the kernel's assist into 'unavailable' with the reason", async () => {
    const { sender, transport } = notebookPieces("run");
    transport.answers.set("complete", { refuse: "kernel busy" });
    assert.deepEqual(await sender.kernelAssist("nb").complete("im", 2), { status: "unavailable", reason: "kernel busy" });
    transport.answers.set("inspect", { refuse: "not connected" });
    assert.deepEqual(await sender.kernelAssist("nb").inspect("x", 1), { status: "unavailable", reason: "not connected" });
  });

  it("names each control op in a notice's words", () => {
    assert.equal(describeOp({ op: "execute", notebookId: "nb", cellIds: ["a"], sourceHashes: {} }), "Running the cell");
    assert.equal(describeOp({ op: "execute", notebookId: "nb", cellIds: ["a", "b"], sourceHashes: {} }), "Running 2 cells");
    assert.equal(describeOp({ op: "commit-prediction", notebookId: "nb", questionId: "q", choice: "c" }), "Committing the prediction");
  });
});
