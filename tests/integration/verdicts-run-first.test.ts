/**
 * A verdicts cell reads the evidence its experiment cells recorded in this
 * kernel, so running it first runs, visibly and in notebook order, every
 * experiment cell that has not run here with the values the form shows — and
 * no other. Real catalog, real kernel, real database.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 300_000 };
const SCENARIO = "params-not-updated";

describe("running a scenario's verdicts cell", () => {
  let harness: SocketHarness;
  let client: TestClient;
  before(async () => {
    harness = await SocketHarness.start();
    client = await harness.client();
  });
  after(async () => {
    client.close();
    await harness.close();
  });

  async function open(): Promise<NotebookDocument> {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: SCENARIO, params: {} });
    assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
    const opened = await client.send({ op: "open", notebookId: created.notebook.id });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook;
  }

  async function current(notebookId: string): Promise<NotebookDocument> {
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    return opened.notebook;
  }

  /** Runs the verdicts cell alone; resolves with the ids of the cells that started, in order, once it finished. */
  async function runVerdicts(doc: NotebookDocument): Promise<{ started: string[]; finished: Extract<NotebookEvent, { type: "cell-finished" }> }> {
    const verdicts = doc.cells.find((c) => c.template?.id === `${SCENARIO}/verdicts`)!;
    const from = client.events.length;
    const ack = await client.send({ op: "execute", notebookId: doc.id, cellIds: [verdicts.id], sourceHashes: { [verdicts.id]: sourceHash(verdicts.source) } });
    assert.ok(ack.ok, ack.ok ? "" : ack.error);
    const finished = await client.waitFor((e) => e.type === "cell-finished" && e.cellId === verdicts.id && client.events.indexOf(e) >= from);
    assert.ok(finished.type === "cell-finished");
    const started = client.events
      .slice(from)
      .filter((e): e is Extract<NotebookEvent, { type: "cell-run-state" }> => e.type === "cell-run-state" && e.runState === "running")
      .map((e) => e.cellId);
    return { started, finished };
  }

  const experiments = (doc: NotebookDocument): Cell[] =>
    doc.cells.filter((c) => c.kind === "code" && c.template !== null && c.template.id !== `${SCENARIO}/verdicts`);

  it("runs the experiment cells that have not run with the values shown first, in notebook order, then only those that changed", LIMIT, async () => {
    const doc = await open();
    const cells = experiments(doc);
    assert.ok(cells.length >= 2, "the scenario has experiment cells");
    const verdicts = doc.cells.find((c) => c.template?.id === `${SCENARIO}/verdicts`)!;

    const first = await runVerdicts(doc);
    assert.deepEqual(first.started, [...cells.map((c) => c.id), verdicts.id], "every experiment cell ran, in order, then the verdicts");
    assert.equal(first.finished.type === "cell-finished" && first.finished.status, "ok");
    const afterFirst = await current(doc.id);
    for (const cell of experiments(afterFirst)) {
      assert.equal(cell.lastRun?.status, "ok", `${cell.template!.id} ran under its own cell`);
      assert.ok(cell.outputs.length > 0 || cell.executionCount !== null, `${cell.template!.id} shows its run`);
    }

    const second = await runVerdicts(doc);
    assert.deepEqual(second.started, [verdicts.id], "nothing is re-run when every experiment ran here with these values");

    // A form change re-renders every attached cell: they all ran with other values now.
    const changed = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: cells[0]!.id, values: { steps: 3 } });
    assert.ok(changed.ok, changed.ok ? "" : changed.error);
    const third = await runVerdicts(await current(doc.id));
    assert.deepEqual(third.started, [...cells.map((c) => c.id), verdicts.id], "stale after the form changed");

    // A restarted kernel has no evidence: everything runs again.
    const beforeRestart = client.events.length;
    assert.ok((await client.send({ op: "restart", notebookId: doc.id })).ok);
    await client.waitFor((e) => e.type === "kernel-status" && e.status.state === "idle" && client.events.indexOf(e) >= beforeRestart);
    const fourth = await runVerdicts(await current(doc.id));
    assert.deepEqual(fourth.started, [...cells.map((c) => c.id), verdicts.id], "a new kernel runs them again");
  });
});
