/**
 * An imported cell that claims to be rendered from a template cannot lie, on
 * the real import route, database, notebook hub and scenario catalog: a claim
 * the catalog does not render exactly is imported detached (freely editable,
 * with a note), reattach really re-renders it from the catalog or refuses
 * saying why, and the lab's own export imports back attached.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { handleNotebookFiles } from "../../server/http/notebook-files";
import { LOCAL_USER } from "../../server/persistence";
import type { Cell, NotebookDocument } from "../../server/core/protocol/notebook-model";
import { NOTEBOOK_IMPORT_PATH, notebookExportPath } from "../../server/core/protocol/socket-api";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 120_000 };
const EVIL = 'import os\nos.system("echo pwned > /tmp/pwned")';

function claimed(id: string, parameters: Record<string, unknown>, source: string) {
  return { cell_type: "code", id: "claim", execution_count: null, outputs: [], source, metadata: { mgpulab: { template: { id, parameters } } } };
}

const ipynb = (...cells: unknown[]) => JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells });

describe("imported template claims", () => {
  let harness: SocketHarness;
  let client: TestClient;
  let http: Server;
  let url: string;
  before(async () => {
    harness = await SocketHarness.start();
    client = await harness.client();
    // The import and export routes as the server mounts them, given the lab's scenario catalog.
    http = createServer((req, res) => {
      const options = { notebooks: harness.lab.catalog.repos.notebooks, ownerId: LOCAL_USER.id, onError: () => undefined, templates: harness.lab.scenarios };
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

  async function importFile(text: string): Promise<{ doc: NotebookDocument; notes: string[] }> {
    const response = await labFetch(`${url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", body: text, headers: { "Content-Type": "application/x-ipynb+json" } });
    const reply = (await response.json()) as { id: string; notes: string[]; error?: string };
    assert.equal(response.status, 201, reply.error);
    return { doc: await open(reply.id), notes: reply.notes };
  }

  async function open(notebookId: string): Promise<NotebookDocument> {
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook;
  }

  const cellOf = async (notebookId: string, cellId = "claim"): Promise<Cell> => (await open(notebookId)).cells.find((cell) => cell.id === cellId)!;

  it("a claim with a bad value and arbitrary code imports detached and editable; reattach refuses, naming the value", LIMIT, async () => {
    const { doc, notes } = await importFile(ipynb(claimed("dp-basics/split", { devices: "__import__('os').getcwd()", batch_size: 64 }, EVIL)));
    const cell = doc.cells[0]!;
    assert.equal(cell.source, EVIL, "the file's code, as its own text");
    assert.deepEqual(cell.template, { id: "dp-basics/split", parameters: { devices: "__import__('os').getcwd()", batch_size: 64 }, detached: true, fields: [], question: null });
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /^cells\[0\]: claimed template dp-basics\/split; imported detached: its code was not rendered by this lab \(the scenario catalog refuses it: parameter 'devices' must be an int/);

    assert.ok((await client.send({ op: "set-source", notebookId: doc.id, cellId: "claim", source: "print('mine')" })).ok, "its code is freely editable");
    const form = await client.send({ op: "set-parameters", notebookId: doc.id, cellId: "claim", values: { batch_size: 32 } });
    assert.ok(!form.ok && /detached from its template; reattach it/.test(form.error));

    const reattach = await client.send({ op: "reattach-template", notebookId: doc.id, cellId: "claim" });
    assert.ok(!reattach.ok, "a reattach that cannot render is refused, not answered ok");
    assert.match(reattach.error, /cell claim cannot be reattached to template dp-basics\/split: parameter 'devices' must be an int/);
    const after_ = await cellOf(doc.id);
    assert.equal(after_.source, "print('mine')");
    assert.equal(after_.template?.detached, true);
  });

  it("a claim with valid values but other code imports detached; reattach replaces the code with the catalog's", LIMIT, async () => {
    const { doc, notes } = await importFile(ipynb(claimed("dp-basics/split", { batch_size: 48, devices: 3 }, EVIL)));
    assert.equal(doc.cells[0]!.template?.detached, true);
    assert.deepEqual(notes, ["cells[0]: claimed template dp-basics/split; imported detached: its code was not rendered by this lab (its code differs from what the template renders for its values)"]);

    const reattach = await client.send({ op: "reattach-template", notebookId: doc.id, cellId: "claim" });
    assert.ok(reattach.ok, reattach.ok ? "" : reattach.error);
    const cell = await cellOf(doc.id);
    const rendered = await harness.lab.scenarios.render("dp-basics/split", { batch_size: 48, devices: 3 });
    assert.equal(cell.source, rendered.source, "the code is now the catalog's");
    assert.doesNotMatch(cell.source, /pwned/);
    assert.deepEqual(cell.template, rendered.template);

    const again = await client.send({ op: "reattach-template", notebookId: doc.id, cellId: "claim" });
    assert.ok(!again.ok && /already attached to template dp-basics\/split; there is nothing to reattach/.test(again.error), "no silent ok for a reattach that changes nothing");
  });

  it("a claim of a template the catalog does not know imports detached; reattach refuses naming it", LIMIT, async () => {
    const { doc, notes } = await importFile(ipynb(claimed("evil/backdoor", {}, EVIL)));
    assert.equal(doc.cells[0]!.template?.detached, true);
    assert.match(notes[0]!, /claimed template evil\/backdoor; imported detached: .*unknown scenario 'evil'/);
    const reattach = await client.send({ op: "reattach-template", notebookId: doc.id, cellId: "claim" });
    assert.ok(!reattach.ok && /cell claim cannot be reattached to template evil\/backdoor: unknown scenario 'evil'/.test(reattach.error));
    assert.equal((await cellOf(doc.id)).source, EVIL);
  });

  it("the lab's own export imports back attached, except a cell whose code was changed in the file", LIMIT, async () => {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics", params: { batch_size: 62 } });
    assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
    const original = await open(created.notebook.id);
    const templated = original.cells.filter((cell) => cell.template !== null);
    assert.ok(templated.length >= 3);

    const exported = await (await labFetch(`${url}${notebookExportPath(original.id)}`)).text();
    const roundTrip = await importFile(exported);
    assert.deepEqual(roundTrip.notes, []);
    assert.deepEqual(
      roundTrip.doc.cells.map((cell) => [cell.source, cell.template]),
      original.cells.map((cell) => [cell.source, cell.template]),
      "every cell attached, with the catalog's template",
    );

    const file = JSON.parse(exported) as { cells: Array<{ id: string; source: string[] }> };
    const tampered = file.cells.find((cell) => cell.id === templated[0]!.id)!;
    tampered.source = [...tampered.source, "\nprint('added in the file')"];
    const edited = await importFile(JSON.stringify(file));
    const index = file.cells.indexOf(tampered);
    assert.deepEqual(edited.notes, [`cells[${index}]: claimed template ${templated[0]!.template!.id}; imported detached: its code was not rendered by this lab (its code differs from what the template renders for its values)`]);
    assert.deepEqual(
      edited.doc.cells.map((cell) => cell.template?.detached ?? null),
      original.cells.map((cell) => (cell.template === null ? null : cell.id === tampered.id)),
    );
  });
});
