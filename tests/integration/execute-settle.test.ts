/**
 * An execute is answered "taken" only once its queued execution is stored,
 * and a quick cell's queued, running and finished states reach a viewer as
 * one packet from one commit (durability-gate.ts, "Settling"). The settle
 * window is set long here (3 s) so that neither depends on how fast this
 * machine is: a trivial cell ends well within it, a sleeping one does not.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { SocketHarness } from "../helpers/socket-harness";
import type { TestClient } from "../helpers/socket-harness";

const SETTLE_MS = 3_000;
const LIMIT = { timeout: 120_000 };

describe("an execute settles", () => {
  let harness: SocketHarness;
  let client: TestClient;
  let notebookId: string;
  let cellId: string;
  /** Every notebook:events packet the viewer got, in order. */
  const packets: NotebookEvent[][] = [];

  before(async () => {
    harness = await SocketHarness.start({ settleMs: SETTLE_MS });
    client = await harness.client();
    client.socket.on("notebook:events", (_notebookId, _firstSeq, events) => void packets.push(events));
    notebookId = await harness.createNotebook("settling");
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    cellId = opened.notebook.cells[0]!.id;
    // The kernel is up before the runs below: its start is not what they measure.
    assert.ok((await client.run(notebookId, { [cellId]: "0" })).ok);
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
  }, LIMIT);

  after(async () => {
    client.close();
    await harness.close();
  });

  it("answers a quick cell's states as one packet, queued to finished, in order", LIMIT, async () => {
    const before = packets.length;
    const ran = await client.run(notebookId, { [cellId]: "1+1" });
    assert.ok(ran.ok, JSON.stringify(ran));
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.filter((each) => each.type === "cell-finished").length >= 2);
    const ofCell = packets.slice(before).filter((events) => events.some((event) => "cellId" in event && event.cellId === cellId && event.type !== "cell-source"));
    assert.equal(ofCell.length, 1, `one packet for the run, got ${ofCell.length}: ${JSON.stringify(ofCell.map((events) => events.map((event) => event.type)))}`);
    const states = ofCell[0]!.flatMap((event) => (event.type === "cell-run-state" ? [event.runState] : []));
    assert.deepEqual(states, ["queued", "running", "idle"]);
    const ofThisCell = ofCell[0]!.filter((event) => "cellId" in event && event.cellId === cellId).map((event) => event.type);
    assert.deepEqual(ofThisCell, ["cell-run-state", "cell-outputs-cleared", "cell-run-state", "cell-output", "cell-run-state", "cell-finished"]);
  });

  it("answers an execute only once its execution is stored, though its states wait to be shown", LIMIT, async () => {
    const shownBefore = client.events.length;
    const ran = await client.run(notebookId, { [cellId]: "import time\ntime.sleep(60)" });
    assert.ok(ran.ok, JSON.stringify(ran));
    // Read at once, before anything else happens: "taken" means stored.
    const runs = await harness.lab.repositories.runs.list(notebookId);
    const executions = (await Promise.all(runs.map((run) => harness.lab.repositories.runs.listExecutions(run.id)))).flat();
    const stored = executions.find((execution) => execution.source.includes("time.sleep(60)"));
    assert.ok(stored, "the execution is stored when the execute is answered");
    assert.ok(["queued", "running"].includes(stored.status), stored.status);
    await client.waitFor((event) => event.type === "cell-run-state" && event.cellId === cellId && event.runState === "running" && client.events.indexOf(event) >= shownBefore);
    assert.ok((await client.send({ op: "interrupt", notebookId })).ok);
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && event.status !== "ok");
  });
});
