/**
 * Guided scenarios over the socket, against the real catalog service and a
 * real kernel: parameter forms re-render code (or refuse and change nothing),
 * detach/reattach, predictions kept as committed, and a cell's metrics
 * reaching viewers live and the chart routes afterwards, tagged by variant.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ExecutionMetrics, ExecutionSummary } from "../../server/core/protocol/metrics-model";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { executionChartSvg } from "../../server/http/execution-routes";
import { exportNotebook } from "../../server/ipynb/export";
import { validateWithNbformat } from "../helpers/nbformat";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 120_000 };

function templated(doc: NotebookDocument, templateId: string): Cell {
  const cell = doc.cells.find((c) => c.template?.id === templateId);
  assert.ok(cell, `a cell rendered from ${templateId}`);
  return cell;
}

async function openScenario(client: TestClient, params: Record<string, number | boolean | string> = {}): Promise<NotebookDocument> {
  const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics", params });
  assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
  return opened.notebook;
}

describe("scenario forms", () => {
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

  it("a scenario notebook carries each cell's form fields, its question and a templated verdicts cell", LIMIT, async () => {
    const doc = await openScenario(client);
    const split = templated(doc, "dp-basics/split");
    assert.equal(split.template!.detached, false);
    assert.ok(split.template!.fields.some((f) => f.name === "batch_size" && f.type === "int" && f.min === 1), "the fields this cell uses, typed and bounded");
    assert.ok(split.template!.question && split.template!.question.choices.length >= 2, "the step's predict-first question rides on its first cell");
    const verdicts = templated(doc, "dp-basics/verdicts");
    assert.match(verdicts.source, /show_verdicts/);
    assert.equal(verdicts.template!.fields.length, Object.keys(verdicts.template!.parameters).length, "the verdicts form offers every parameter");
  });

  it("a form change re-renders every attached cell of the scenario with the value as a literal", LIMIT, async () => {
    const doc = await openScenario(client);
    const split = templated(doc, "dp-basics/split");
    const from = client.events.length;
    const ack = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: split.id, values: { batch_size: 62 } });
    assert.ok(ack.ok, ack.ok ? "" : ack.error);
    const changes = client.events.slice(from).filter((e): e is Extract<NotebookEvent, { type: "cell-template" }> => e.type === "cell-template");
    const attached = doc.cells.filter((c) => c.template && !c.template.detached).length;
    assert.equal(changes.length, attached, "one re-render per attached cell");
    const splitChange = changes.find((e) => e.cellId === split.id)!;
    assert.match(splitChange.source, /batch_size, devices = 62, 4/);
    assert.equal(splitChange.template!.parameters.batch_size, 62);
    const verdictChange = changes.find((e) => e.template?.id === "dp-basics/verdicts")!;
    assert.match(verdictChange.source, /'batch_size': 62/, "the verdicts run with the values the form shows");
  });

  it("refuses out-of-range, mistyped and hostile values with the parameter's rule, changing nothing", LIMIT, async () => {
    const doc = await openScenario(client);
    const split = templated(doc, "dp-basics/split");
    const from = client.events.length;
    for (const values of [{ batch_size: 100_000 }, { batch_size: "1); import os; os.system('x')" }, { batch_size: 1.5 }, { devices: 99 }]) {
      const ack = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: split.id, values });
      assert.equal(ack.ok, false, JSON.stringify(values));
      assert.match(ack.ok ? "" : ack.error, /batch_size|devices/, JSON.stringify(values));
    }
    const unknown = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: split.id, values: { __class__: 1 } });
    assert.equal(unknown.ok, false);
    assert.equal(client.events.slice(from).filter((e) => e.type === "cell-template").length, 0, "nothing re-rendered");
    const reopened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(reopened.ok && reopened.notebook);
    assert.equal(templated(reopened.notebook, "dp-basics/split").source, split.source);
  });

  it("an attached cell's code is changed through its form; detached, it is edited freely and the form no longer applies", LIMIT, async () => {
    const doc = await openScenario(client);
    const split = templated(doc, "dp-basics/split");
    const refused = await client.send({ op: "set-source", notebookId: doc.id, cellId: split.id, source: "print('mine')" });
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? "" : refused.error, /detach/);
    assert.ok((await client.send({ op: "detach-template", notebookId: doc.id, cellId: split.id })).ok);
    assert.ok((await client.send({ op: "set-source", notebookId: doc.id, cellId: split.id, source: "print('mine')" })).ok);
    const other = templated(doc, "dp-basics/equivalence");
    assert.ok((await client.send({ op: "set-parameters", notebookId: doc.id, cellId: other.id, values: { devices: 3 } })).ok);
    const formOnDetached = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: split.id, values: { devices: 2 } });
    assert.equal(formOnDetached.ok, false);
    let opened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(opened.ok && opened.notebook);
    assert.equal(templated(opened.notebook, "dp-basics/split").source, "print('mine')", "a detached cell keeps its edits");
    assert.ok((await client.send({ op: "reattach-template", notebookId: doc.id, cellId: split.id })).ok);
    opened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(opened.ok && opened.notebook);
    const reattached = templated(opened.notebook, "dp-basics/split");
    assert.equal(reattached.template!.detached, false);
    assert.match(reattached.source, /batch_size, devices = 64, 3/, "reattached with the scenario's current values");
  });

  it("a prediction must be one of the question's choices, is kept as committed, and survives a server restart", LIMIT, async () => {
    const doc = await openScenario(client);
    const question = templated(doc, "dp-basics/split").template!.question!;
    const bad = await client.send({ op: "commit-prediction", notebookId: doc.id, questionId: question.id, choice: "something else" });
    assert.equal(bad.ok, false);
    const unknown = await client.send({ op: "commit-prediction", notebookId: doc.id, questionId: "dp-basics/nope", choice: question.choices[0]! });
    assert.equal(unknown.ok, false);
    const choice = question.choices[1]!;
    assert.ok((await client.send({ op: "commit-prediction", notebookId: doc.id, questionId: question.id, choice })).ok);
    const event = await client.waitFor((e) => e.type === "prediction-committed" && e.prediction.questionId === question.id);
    assert.ok(event.type === "prediction-committed" && event.prediction.choice === choice);
    assert.equal(event.type === "prediction-committed" && event.prediction.afterRun, false, "committed before anything ran");
    const again = await client.send({ op: "commit-prediction", notebookId: doc.id, questionId: question.id, choice: question.choices[0]! });
    assert.equal(again.ok, false, "no second answer after seeing the first");

    // An answer to a question whose experiment already ran is kept, and marked as given after the run.
    const replication = templated(doc, "dp-basics/replication");
    await client.run(doc.id, { [replication.id]: replication.source });
    await client.waitFor((e) => e.type === "cell-finished" && e.cellId === replication.id);
    const late = replication.template!.question!;
    assert.ok((await client.send({ op: "commit-prediction", notebookId: doc.id, questionId: late.id, choice: late.choices[1]! })).ok);
    const lateEvent = await client.waitFor((e) => e.type === "prediction-committed" && e.prediction.questionId === late.id);
    assert.ok(lateEvent.type === "prediction-committed" && lateEvent.prediction.afterRun, "marked as given after the run");
    await harness.lab.hub.shutdownAll();
    const reopened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(reopened.ok && reopened.notebook);
    assert.equal(reopened.notebook.predictions[question.id]?.choice, choice, "loaded from the database");
  });
});

describe("metrics of a cell execution", () => {
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

  it("stream live with the execution id and variant tag, then read back through the chart routes", LIMIT, async () => {
    const id = await harness.createNotebook("charts");
    const opened = await client.send({ op: "open", notebookId: id });
    assert.ok(opened.ok && opened.notebook);
    const cellId = opened.notebook.cells[0]!.id;
    const code = [
      "import mgpulab as lab",
      "for variant, scale in (('1 device', 1.0), ('DDP x2', 0.5)):",
      "    for step in range(30):",
      "        for rank in range(1 if variant == '1 device' else 2):",
      "            lab.log(step, loss=scale / (step + 1), rank=rank, run_id=variant, forward_ms=1.5 + rank)",
    ].join("\n");
    await client.run(id, { [cellId]: code });
    const running = await client.waitFor((e) => e.type === "cell-run-state" && e.cellId === cellId && e.runState === "running");
    assert.ok(running.type === "cell-run-state" && running.executionId);
    const executionId = running.executionId;
    await client.waitFor((e) => e.type === "cell-finished" && e.cellId === cellId);
    const live = client.events.flatMap((e) => (e.type === "cell-metric-points" && e.cellId === cellId ? [e] : []));
    assert.ok(live.every((e) => e.executionId === executionId));
    const points = live.flatMap((e) => e.points);
    assert.equal(points.length, 30 + 60, "every message, once");
    assert.deepEqual([...new Set(points.map((p) => p.tag))].sort(), ["1 device", "DDP x2"]);

    await (await harness.lab.hub.get(id))!.dispose(); // drains the batched metric writes
    const metrics = (await (await labFetch(`${harness.url}/api/executions/${executionId}/metrics`)).json()) as ExecutionMetrics;
    assert.equal(metrics.execution.cellId, cellId);
    assert.match(metrics.execution.deviceMode, /cpu|CUDA/);
    const loss = metrics.series.filter((s) => s.name === "loss");
    assert.deepEqual(loss.map((s) => `${s.tag}/${s.rank}:${s.steps.length}`).sort(), ["1 device/0:30", "DDP x2/0:30", "DDP x2/1:30"]);
    const ddpRank1 = metrics.series.find((s) => s.tag === "DDP x2" && s.name === "loss" && s.rank === 1)!;
    assert.equal(ddpRank1.values[9], 0.5 / 10, "values as logged");
    const list = (await (await labFetch(`${harness.url}/api/executions`)).json()) as ExecutionSummary[];
    assert.ok(list.some((run) => run.executionId === executionId && run.pointCount === 90 * 2), "listed for comparison with its point count");
    const missing = await labFetch(`${harness.url}/api/executions/nope/metrics`);
    assert.equal(missing.status, 404);
    const reopened = await client.send({ op: "open", notebookId: id });
    assert.ok(reopened.ok && reopened.notebook);
    assert.equal(reopened.notebook.cells[0]!.executionId, executionId, "a reloaded cell finds its run's charts");

    // The .ipynb export keeps a static image of the charts, which Jupyter's validator accepts.
    const { text } = await exportNotebook(harness.lab.catalog.repos.notebooks, id, (execution) => executionChartSvg(harness.lab.repositories.metrics, execution));
    const validation = validateWithNbformat(text);
    assert.equal(validation.status, 0, validation.stderr);
    const exported = JSON.parse(text) as { cells: Array<{ outputs: Array<{ output_type: string; data?: Record<string, string[]> }> }> };
    const image = exported.cells[0]!.outputs.find((o) => o.output_type === "display_data" && o.data?.["image/svg+xml"]);
    assert.ok(image, "a display output with the chart image");
    const svg = image.data!["image/svg+xml"]!.join("");
    assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.ok(svg.includes("1 device") && svg.includes("DDP x2"), "the legend names the variants");
    assert.doesNotMatch(svg, /<script/i);
  });

  it("name the devices each variant ran on, live and in the stored run, with the plan the toolkit used", LIMIT, async () => {
    const id = await harness.createNotebook("device plans");
    const opened = await client.send({ op: "open", notebookId: id });
    assert.ok(opened.ok && opened.notebook);
    const cellId = opened.notebook.cells[0]!.id;
    const code = [
      "import torch, mgpulab as lab",
      "model = lab.DataParallel(torch.nn.Linear(4, 2), device_ids=[0, 1])",
      "timer = lab.StepTimer(model, run_id='DataParallel x2')",
      "for step, x in enumerate(timer.data([torch.randn(8, 4)] * 3)):",
      "    with timer.phase('forward'):",
      "        loss = model(x).pow(2).mean()",
      "    timer.step(step, loss=loss)",
      "print(model.device_mode.label)",
    ].join("\n");
    const from = client.events.length; // cell ids repeat across notebooks: only this run's events count
    const ours = (e: NotebookEvent) => client.events.indexOf(e) >= from;
    await client.run(id, { [cellId]: code });
    const live = await client.waitFor((e) => e.type === "cell-device-plan" && e.cellId === cellId && ours(e));
    await client.waitFor((e) => e.type === "cell-finished" && e.cellId === cellId && ours(e));
    assert.ok(live.type === "cell-device-plan");
    assert.equal(live.tag, "DataParallel x2");
    assert.equal(live.plan.engine, "DataParallel");
    assert.equal(live.plan.count, 2);
    const printed = client.events.slice(from).flatMap((e) => (e.type === "cell-stream" && e.cellId === cellId ? [e.text] : [])).join("");
    assert.equal(printed.trim(), live.plan.label, "the label charts show is the plan the model ran");

    await (await harness.lab.hub.get(id))!.dispose();
    const metrics = (await (await labFetch(`${harness.url}/api/executions/${live.executionId}/metrics`)).json()) as ExecutionMetrics;
    assert.deepEqual(metrics.execution.devicePlans, { "DataParallel x2": live.plan });
  });
});
