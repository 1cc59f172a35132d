/**
 * Undo of a reattach over the socket, with the real catalog and database:
 * the server puts back exactly the detached code and template the reattach
 * replaced, durably (a restarted server still has it), and refuses an undo
 * with nothing to undo, changing nothing.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };
const EDITED = "# my own version\nprint('kept through an undo')\n";

describe("undo of a reattach", () => {
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

  async function open(c: TestClient, notebookId: string): Promise<NotebookDocument> {
    const opened = await c.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook;
  }

  const split = (doc: NotebookDocument): Cell => doc.cells.find((cell) => cell.template?.id === "dp-basics/split")!;

  async function ok(command: Record<string, unknown>): Promise<void> {
    const ack = await client.send(command);
    assert.ok(ack.ok, ack.ok ? "" : ack.error);
  }

  it("puts back the edited code and the detached template, durably; a second undo is refused", LIMIT, async () => {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    const cellId = split(await open(client, notebookId)).id;
    await ok({ op: "detach-template", notebookId, cellId });
    await ok({ op: "set-source", notebookId, cellId, source: EDITED });
    const detached = split(await open(client, notebookId));

    await ok({ op: "reattach-template", notebookId, cellId });
    const reattached = split(await open(client, notebookId));
    assert.equal(reattached.template?.detached, false);
    assert.notEqual(reattached.source, EDITED);

    await ok({ op: "undo-reattach", notebookId, cellId });
    const undone = split(await open(client, notebookId));
    assert.equal(undone.source, EDITED, "the edited code, exactly");
    assert.deepEqual(undone.template, detached.template, "the detached template as it was");

    const again = await client.send({ op: "undo-reattach", notebookId, cellId });
    assert.ok(!again.ok && again.code === "conflict" && /no reattach of cell .* to undo/.test(again.error), "one undo per reattach");
    assert.equal(split(await open(client, notebookId)).source, EDITED, "a refused undo changes nothing");

    // Durable like any edit: what a restarted server loads from the database.
    const stored = await harness.lab.catalog.repos.notebooks.load(notebookId);
    const row = stored.cells.find((cell) => cell.id === cellId)!;
    assert.equal(row.source, EDITED);
    assert.deepEqual(row.template, detached.template);
  });

  it("an undo after the cell was detached again is refused, changing nothing", LIMIT, async () => {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    const cellId = split(await open(client, notebookId)).id;
    await ok({ op: "detach-template", notebookId, cellId });
    await ok({ op: "set-source", notebookId, cellId, source: EDITED });
    await ok({ op: "reattach-template", notebookId, cellId });
    await ok({ op: "detach-template", notebookId, cellId });
    await ok({ op: "set-source", notebookId, cellId, source: "print('newer')" });

    const undo = await client.send({ op: "undo-reattach", notebookId, cellId });
    assert.ok(!undo.ok && undo.code === "conflict" && /changed since it was reattached/.test(undo.error));
    assert.equal(split(await open(client, notebookId)).source, "print('newer')");
  });
});
