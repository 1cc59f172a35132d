/**
 * Opening a scenario again, over the socket with the real catalog and
 * database: the user's most recently edited copy is found (not a deleted
 * one, not a notebook that merely shares its name), and a fresh copy gets a
 * title no other notebook has.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NotebookListItem } from "../../server/core/protocol/notebook-model";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("scenario copies", () => {
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

  async function find(scenarioId: string): Promise<{ existing: NotebookListItem | undefined; freshTitle: string | undefined }> {
    const ack = await client.sendLab({ op: "find-scenario-copy", scenarioId });
    assert.ok(ack.ok, ack.ok ? "" : ack.error);
    return { existing: ack.notebook, freshTitle: ack.freshTitle };
  }

  async function create(scenarioId: string): Promise<NotebookListItem> {
    const ack = await client.sendLab({ op: "create-from-scenario", scenarioId });
    assert.ok(ack.ok && ack.notebook, ack.ok ? "" : ack.error);
    return ack.notebook;
  }

  it("finds the most recently edited copy, and titles each fresh copy apart", LIMIT, async () => {
    const scenarios = await client.sendLab({ op: "list-scenarios" });
    const title = scenarios.ok ? scenarios.scenarios?.find((scenario) => scenario.id === "dp-basics")?.title : undefined;
    assert.ok(title);
    // A notebook that only shares the name is no copy, but its name is taken.
    const namesake = await client.sendLab({ op: "create-notebook", title });
    assert.ok(namesake.ok && namesake.notebook);
    assert.deepEqual(await find("dp-basics"), { existing: undefined, freshTitle: `${title} (2)` });

    const first = await create("dp-basics");
    assert.equal(first.title, `${title} (2)`);
    assert.equal((await find("dp-basics")).existing?.id, first.id);

    const second = await create("dp-basics");
    assert.equal(second.title, `${title} (3)`);
    const latest = await find("dp-basics");
    assert.equal(latest.existing?.id, second.id, "the most recently edited copy");
    assert.equal(latest.freshTitle, `${title} (4)`);

    // Editing the first makes it the most recent.
    // updatedAt has millisecond resolution: the rename must come at a later millisecond than the second copy.
    while (Date.now() <= Date.parse(second.updatedAt)) await new Promise((resolve) => setImmediate(resolve));
    assert.ok((await client.sendLab({ op: "rename-notebook", notebookId: first.id, title: "mine" })).ok);
    assert.equal((await find("dp-basics")).existing?.id, first.id);

    // A deleted copy is not offered; its title stays taken (restored, it would clash).
    assert.ok((await client.sendLab({ op: "delete-notebook", notebookId: first.id })).ok);
    assert.ok((await client.sendLab({ op: "delete-notebook", notebookId: second.id })).ok);
    assert.deepEqual(await find("dp-basics"), { existing: undefined, freshTitle: `${title} (2)` });
    assert.equal((await find("hangs")).existing, undefined, "another scenario's copies are not this one's");

    const unknown = await client.sendLab({ op: "find-scenario-copy", scenarioId: "nope" });
    assert.ok(!unknown.ok && unknown.code === "not-found");
  });
});
