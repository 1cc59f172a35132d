/**
 * Lone UTF-16 surrogates on the real server: a file with one is refused with
 * the field and the character and writes nothing; valid text of every plane
 * (pairs split across a multiline string included) comes back from the
 * database and the export exactly as it went in.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NOTEBOOK_IMPORT_PATH, notebookExportPath } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 120_000 };

/** Built as text so that `\ud800` reaches the server as the JSON escape a file holds. */
function ipynb(source: string, streamText = '"ok\\n"'): string {
  return `{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"cell_type":"markdown","id":"intro","metadata":{},"source":"# Title"},{"cell_type":"code","id":"c","metadata":{},"execution_count":1,"source":${source},"outputs":[{"output_type":"stream","name":"stdout","text":${streamText}}]}]}`;
}

describe("lone surrogates in an imported .ipynb", () => {
  let server: LabServer;
  let client: TestClient;
  before(async () => {
    server = await LabServer.start();
    client = await connectClient(server.url);
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  async function post(text: string): Promise<{ status: number; body: { id?: string; error?: string; path?: string } }> {
    const response = await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", body: text, headers: { "Content-Type": "application/x-ipynb+json" } });
    return { status: response.status, body: (await response.json()) as { id?: string; error?: string; path?: string } };
  }

  async function notebookCount(): Promise<number> {
    const listed = await client.sendLab({ op: "list-notebooks" });
    assert.ok(listed.ok && listed.notebooks);
    return listed.notebooks.length;
  }

  it("refuses one in a source or an output, naming the field and the character, and writes nothing", LIMIT, async () => {
    const before_ = await notebookCount();
    const inSource = await post(ipynb('"a\\ud800b"'));
    assert.equal(inSource.status, 400);
    assert.equal(inSource.body.error, "invalid notebook file at cells[1].source: contains a lone UTF-16 surrogate (\\ud800) at character 1: not valid Unicode, which UTF-8 cannot encode, so neither the lab nor Jupyter could keep it");
    assert.equal(inSource.body.path, "cells[1].source");

    const inOutput = await post(ipynb('"print(1)"', '["line\\n", "\\udc00"]'));
    assert.equal(inOutput.status, 400);
    assert.match(inOutput.body.error ?? "", /at cells\[1\]\.outputs\[0\]\.text: contains a lone UTF-16 surrogate \(\\udc00\) at character 5/);
    assert.equal(await notebookCount(), before_);
  });

  it("keeps valid text of every plane exactly, through the database and the export", LIMIT, async () => {
    const source = 'print("Ünïcödé — 漢字 — 🚀 — 𝔘")\n# 🙂';
    // The emoji 🙂 (U+1F642) split between two lines of the file's list: whole once joined.
    const created = await post(ipynb('["print(\\"Ünïcödé — 漢字 — 🚀 — 𝔘\\")\\n", "# \\ud83d", "\\ude42"]', '["🚀\\n"]'));
    assert.equal(created.status, 201, created.body.error);
    const opened = await client.send({ op: "open", notebookId: created.body.id! });
    assert.ok(opened.ok && opened.notebook);
    assert.equal(opened.notebook.cells[1]!.source, source);
    assert.deepEqual(opened.notebook.cells[1]!.outputs, [{ kind: "stream", name: "stdout", text: "🚀\n" }]);

    const exported = JSON.parse(await (await labFetch(`${server.url}${notebookExportPath(created.body.id!)}`)).text()) as { cells: Array<{ source: string[] }> };
    assert.equal(exported.cells[1]!.source.join(""), source);
  });
});
