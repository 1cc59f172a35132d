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
import type { ExecutionMetrics } from "../../server/core/protocol/metrics-model";
import { VERDICTS_MIME } from "../../server/core/protocol/metrics-model";
import { verdictReportSchema, type VerdictReport } from "../../server/core/protocol/verdict-model";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { recompute } from "../helpers/verdict-recompute";
import { labFetch } from "../helpers/lab-session";

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

  async function open(scenarioId = SCENARIO, params: Record<string, number | string | boolean> = {}): Promise<NotebookDocument> {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId, params });
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
    const verdicts = doc.cells.find((c) => c.template !== null && c.template.id.endsWith("/verdicts"))!;
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

    // A form change re-renders the attached cells: those whose code changed ran with other values now; the others did not.
    const changed = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: cells[0]!.id, values: { steps: 3 } });
    assert.ok(changed.ok, changed.ok ? "" : changed.error);
    const rerendered = await current(doc.id);
    const before = new Map(cells.map((c) => [c.id, c.source]));
    const stale = experiments(rerendered).filter((c) => c.source !== before.get(c.id)).map((c) => c.id);
    assert.ok(stale.length > 0, "the new value reaches some experiment cell");
    const third = await runVerdicts(rerendered);
    assert.deepEqual(third.started, [...stale, verdicts.id], "only the cells whose values changed run again");

    // A restarted kernel has no evidence: everything runs again.
    const beforeRestart = client.events.length;
    assert.ok((await client.send({ op: "restart", notebookId: doc.id })).ok);
    await client.waitFor((e) => e.type === "kernel-status" && e.status.state === "idle" && client.events.indexOf(e) >= beforeRestart);
    const fourth = await runVerdicts(await current(doc.id));
    assert.deepEqual(fourth.started, [...cells.map((c) => c.id), verdicts.id], "a new kernel runs them again");
  });

  // The verdict a participant reads is the run they watched: every number that names its source is the
  // charts' statistic of the stored series of the execution the claim names, and that execution is the
  // one its cell shows now.
  for (const [scenarioId, params] of [
    ["dp-basics", { batch_size: 10, devices: 3 }],
    ["params-not-updated", {}],
    ["incomplete-results-gil", {}],
    ["dp-not-starting", {}],
    ["hangs", {}],
  ] as const) {
    it(`${scenarioId}: each number in the verdicts equals the statistic of the stored series of the run it names`, LIMIT, async () => {
      const doc = await open(scenarioId, params);
      const { finished } = await runVerdicts(doc);
      assert.equal(finished.type === "cell-finished" && finished.status, "ok");
      const after = await current(doc.id);
      const verdicts = after.cells.find((c) => c.template?.id === `${scenarioId}/verdicts`)!;
      const report = reportOf(verdicts);
      const byId = new Map(after.cells.map((c) => [c.id, c]));
      let checked = 0;
      for (const claim of report.claims) {
        assert.notEqual(claim.status, "needs-run", `${claim.id}: its cell ran first, so nothing needs a run`);
        if (claim.status !== "measured" || !claim.run) continue;
        const cell = byId.get(claim.run.cellId ?? "");
        assert.ok(cell, `${claim.id}: names a cell of this notebook`);
        assert.equal(claim.run.executionId, cell.executionId, `${claim.id}: the execution its cell shows`);
        const sourced = claim.numbers.filter((n) => n.source !== undefined && typeof n.value === "number");
        if (sourced.length === 0) continue;
        const response = await labFetch(`${harness.url}/api/executions/${claim.run.executionId}/metrics`);
        assert.equal(response.status, 200);
        const metrics = (await response.json()) as ExecutionMetrics;
        for (const number of sourced) {
          const expected = recompute(number.source!, metrics);
          assert.ok(expected !== null, `${claim.id} ${number.label}: the stored series give ${JSON.stringify(number.source)} (tags ${[...new Set(metrics.series.map((s) => s.tag))].join(", ")})`);
          const value = number.value as number;
          assert.ok(Math.abs(value - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${claim.id} ${number.label}: verdict ${value}, stored series ${expected}`);
          checked++;
        }
      }
      assert.ok(checked > 0, "the report has numbers read from metric series");
    });
  }
});

function reportOf(cell: Cell): VerdictReport {
  for (const output of cell.outputs) {
    if (output.kind !== "display" && output.kind !== "result") continue;
    const text = output.data[VERDICTS_MIME];
    if (text !== undefined) return verdictReportSchema.parse(JSON.parse(text));
  }
  assert.fail("the verdicts cell shows a verdict report");
}
