/**
 * Committed predictions through export and import, on the real routes,
 * database, socket edge and scenario catalog: they ride in the metadata of
 * the cell that asks their question and come back committed, with their
 * original time and still locked; a malformed, forged, duplicated or
 * unaskable one is left out with a note and costs nothing else of the file.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { handleNotebookFiles } from "../../server/http/notebook-files";
import { LOCAL_USER } from "../../server/persistence";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { NOTEBOOK_IMPORT_PATH, notebookExportPath } from "../../server/core/protocol/socket-api";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 120_000 };

type FileCell = { id: string; metadata: { mgpulab?: { prediction?: Record<string, unknown>; template?: { question?: { id: string } | null } } } };
type IpynbFile = { cells: FileCell[]; metadata: { mgpulab: { title: string; predictions?: unknown[] } } };

describe("predictions through .ipynb export and import", () => {
  let harness: SocketHarness;
  let client: TestClient;
  let http: Server;
  let url: string;
  before(async () => {
    harness = await SocketHarness.start();
    client = await harness.client();
    // The file routes as server/main.ts mounts them.
    http = createServer((req, res) => {
      const repos = harness.lab.catalog.repos;
      const options = { notebooks: repos.notebooks, predictions: repos.predictions, ownerId: LOCAL_USER.id, onError: () => undefined, templates: harness.lab.scenarios };
      if (!handleNotebookFiles(req, res, options)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  after(async () => {
    client?.close();
    http?.close();
    await harness?.close();
  });

  async function open(notebookId: string): Promise<NotebookDocument> {
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook;
  }

  async function exportFile(notebookId: string): Promise<string> {
    const response = await labFetch(`${url}${notebookExportPath(notebookId)}`);
    assert.equal(response.status, 200);
    return response.text();
  }

  async function importFile(text: string): Promise<{ doc: NotebookDocument; notes: string[] }> {
    const response = await labFetch(`${url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", body: text, headers: { "Content-Type": "application/x-ipynb+json" } });
    const reply = (await response.json()) as { id: string; notes: string[]; error?: string };
    assert.equal(response.status, 201, reply.error);
    return { doc: await open(reply.id), notes: reply.notes };
  }

  /** A dp-basics notebook with a prediction committed on each of its first two questions. */
  async function scenarioWithPredictions(): Promise<{ doc: NotebookDocument; questions: string[] }> {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
    assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
    const fresh = await open(created.notebook.id);
    const questions = fresh.cells.flatMap((cell) => (cell.template?.question ? [cell.template.question] : []));
    assert.ok(questions.length >= 2, "dp-basics asks at least two questions");
    for (const [n, question] of questions.slice(0, 2).entries()) {
      const committed = await client.send({ op: "commit-prediction", notebookId: fresh.id, questionId: question.id, choice: question.choices[n % question.choices.length]! });
      assert.ok(committed.ok, committed.ok ? "" : committed.error);
    }
    return { doc: await open(fresh.id), questions: questions.map((question) => question.id) };
  }

  it("a duplicated notebook keeps its owner's predictions, with their time, still locked", LIMIT, async () => {
    const { doc } = await scenarioWithPredictions();
    const duplicated = await client.sendLab({ op: "duplicate-notebook", notebookId: doc.id });
    assert.ok(duplicated.ok && duplicated.notebook, duplicated.ok ? "" : duplicated.error);
    const copy = await open(duplicated.notebook.id);
    assert.deepEqual(copy.predictions, doc.predictions);
    const [questionId] = Object.keys(copy.predictions);
    const again = await client.send({ op: "commit-prediction", notebookId: copy.id, questionId, choice: copy.predictions[questionId!]!.choice });
    assert.equal(again.ok, false, "still locked in the copy");
  });

  it("predictions travel in the asking cell's metadata and come back committed, with their time, still locked", LIMIT, async () => {
    const { doc: original, questions } = await scenarioWithPredictions();
    assert.equal(Object.keys(original.predictions).length, 2);

    const text = await exportFile(original.id);
    const validate = spawnSync("/usr/bin/python3", ["-c", "import nbformat,sys; nbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))"], { input: text, encoding: "utf8" });
    assert.equal(validate.status, 0, `python3-nbformat refused the export:\n${validate.stderr}`);
    const file = JSON.parse(text) as IpynbFile;
    for (const questionId of questions.slice(0, 2)) {
      const carrier = file.cells.find((cell) => cell.metadata.mgpulab?.template?.question?.id === questionId)!;
      const stored = original.predictions[questionId]!;
      assert.deepEqual(
        carrier.metadata.mgpulab?.prediction,
        { questionId, question: carrier.metadata.mgpulab?.prediction?.question, choice: stored.choice, afterRun: false, committedAt: stored.committedAt },
        "in the metadata of the cell that asks it",
      );
      assert.match(String(carrier.metadata.mgpulab?.prediction?.question), /\S/, "with the question as it was asked");
    }

    const { doc: imported, notes } = await importFile(text);
    assert.deepEqual(notes, []);
    assert.notEqual(imported.id, original.id);
    assert.deepEqual(imported.predictions, original.predictions, "the same answers, committed at the same times");

    const asked = imported.cells.find((cell) => cell.template?.question?.id === questions[0])!.template!.question!;
    const other = asked.choices.find((choice) => choice !== original.predictions[questions[0]!]!.choice)!;
    const again = await client.send({ op: "commit-prediction", notebookId: imported.id, questionId: questions[0], choice: other });
    assert.ok(!again.ok && again.code === "conflict" && /already committed/.test(again.error), "an imported prediction is as locked as one committed here");
  });

  it("a malformed, forged, duplicated or unaskable prediction is left out with a note; nothing else is lost", LIMIT, async () => {
    const { doc: original, questions } = await scenarioWithPredictions();
    const file = JSON.parse(await exportFile(original.id)) as IpynbFile;
    const carriers = questions.map((questionId) => file.cells.findIndex((cell) => cell.metadata.mgpulab?.template?.question?.id === questionId));
    const [first, second] = [file.cells[carriers[0]!]!, file.cells[carriers[1]!]!];
    // The first stays intact; the second's choice is not text; a third question gets a time in the future;
    // the notebook's list holds a question no cell asks and a second answer to the first question.
    first.metadata.mgpulab!.prediction!.question = "edited in the file, still a question";
    second.metadata.mgpulab!.prediction!.choice = 42;
    const third = questions[2] === undefined ? null : file.cells[carriers[2]!]!;
    if (third) third.metadata.mgpulab!.prediction = { questionId: questions[2], question: "q", choice: "c", afterRun: false, committedAt: "2999-01-01T00:00:00.000Z" };
    file.metadata.mgpulab.predictions = [
      { questionId: "dp-basics/not-asked", question: "q", choice: "c", afterRun: false, committedAt: "2020-01-01T00:00:00.000Z" },
      { ...first.metadata.mgpulab!.prediction!, choice: "a forged second answer" },
      { questionId: "../../etc", question: "q", choice: "c", afterRun: "no", committedAt: "yesterday" },
    ];

    const { doc, notes } = await importFile(JSON.stringify(file));
    const expected = [
      `cells[${carriers[1]}]: a committed prediction is not valid (choice: Invalid input: expected string, received number); it was not imported`,
      "metadata.mgpulab.predictions[2]: a committed prediction is not valid (questionId: question ids are letters, digits, _, - and /); it was not imported",
      ...(third ? [`cells[${carriers[2]}]: the prediction for ${questions[2]} claims to be committed in the future (2999-01-01T00:00:00.000Z); it was not imported`] : []),
      "metadata.mgpulab.predictions[0]: the prediction for dp-basics/not-asked was dropped: no cell of this notebook asks that question",
      `metadata.mgpulab.predictions[1]: a second prediction for ${questions[0]} was dropped; a prediction is kept as first committed`,
    ];
    assert.deepEqual(notes, expected);
    assert.deepEqual(Object.keys(doc.predictions), [questions[0]], "only the intact prediction is kept");
    assert.deepEqual(doc.predictions[questions[0]!], original.predictions[questions[0]!], "kept as committed, at its original time");
    assert.deepEqual(
      doc.cells.map((cell) => [cell.source, cell.template]),
      original.cells.map((cell) => [cell.source, cell.template]),
      "every cell imported as it was, attached",
    );
  });

  it("a prediction whose question no cell asks any more stays in the file, and is dropped on import with a note", LIMIT, async () => {
    const { doc: original, questions } = await scenarioWithPredictions();
    const asker = original.cells.find((cell) => cell.template?.question?.id === questions[0])!;
    const deleted = await client.send({ op: "delete-cell", notebookId: original.id, cellId: asker.id });
    assert.ok(deleted.ok, deleted.ok ? "" : deleted.error);

    const file = JSON.parse(await exportFile(original.id)) as IpynbFile;
    const kept = original.predictions[questions[0]!]!;
    assert.deepEqual(
      file.metadata.mgpulab.predictions,
      [{ questionId: questions[0], question: asker.template!.question!.text, choice: kept.choice, afterRun: false, committedAt: kept.committedAt }],
      "kept in the notebook's metadata",
    );
    const { doc, notes } = await importFile(JSON.stringify(file));
    assert.deepEqual(notes, [`metadata.mgpulab.predictions[0]: the prediction for ${questions[0]} was dropped: no cell of this notebook asks that question`]);
    assert.deepEqual(Object.keys(doc.predictions), [questions[1]]);
  });
});
