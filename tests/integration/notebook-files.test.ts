/** .ipynb over HTTP on the real server: import creates a notebook, export downloads a valid nbformat 4 file, bad files change nothing. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { NOTEBOOK_IMPORT_PATH, notebookExportPath } from "../../server/core/protocol/socket-api";
import { validateWithNbformat } from "../helpers/nbformat";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 120_000 };
/** What the lab's own import button sends (a cross-site form cannot send this type). */
const IPYNB_HEADERS = { "Content-Type": "application/x-ipynb+json" };

const NOTEBOOK = {
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: "python3", display_name: "Python 3", language: "python" } },
  cells: [
    { cell_type: "markdown", id: "intro", metadata: {}, source: ["# DataParallel basics\n", "Split, replicate, gather."] },
    {
      cell_type: "code",
      id: "run",
      execution_count: 3,
      metadata: { mgpulab: { template: { id: "dp-basics/split", parameters: { batch: 64 } } } },
      source: "print(64 // 4)",
      outputs: [{ output_type: "stream", name: "stdout", text: ["16\n"] }],
    },
  ],
};

describe(".ipynb files over HTTP", () => {
  let dataDir: string;
  let server: LabServer;
  let client: TestClient;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-files-"));
    server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
    client = await connectClient(server.url);
  });
  after(async () => {
    client?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function notebookCount(): Promise<number> {
    const listed = await client.sendLab({ op: "list-notebooks" });
    assert.ok(listed.ok && listed.notebooks);
    return listed.notebooks.length;
  }

  it("imports a notebook, opens it, and exports a file nbformat accepts, the lab's cell data kept", LIMIT, async () => {
    const response = await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}?title=basics`, { method: "POST", headers: IPYNB_HEADERS, body: JSON.stringify(NOTEBOOK) });
    assert.equal(response.status, 201);
    const { id } = (await response.json()) as { id: string };
    const opened = await client.send({ op: "open", notebookId: id });
    assert.ok(opened.ok && opened.notebook);
    assert.deepEqual(opened.notebook.cells.map((cell) => cell.kind), ["markdown", "code"]);
    assert.deepEqual(opened.notebook.cells[1]!.outputs, [{ kind: "stream", name: "stdout", text: "16\n" }]);

    const exported = await labFetch(`${server.url}${notebookExportPath(id)}`);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get("content-disposition") ?? "", /attachment; filename="basics\.ipynb"/);
    const text = await exported.text();
    const validation = validateWithNbformat(text);
    assert.equal(validation.status, 0, validation.stderr);
    const parsed = JSON.parse(text) as { cells: Array<{ metadata: { mgpulab?: { template?: unknown } } }> };
    // The file's code was not rendered by this lab, so the template is kept for reference only (detached).
    assert.deepEqual(parsed.cells[1]!.metadata.mgpulab?.template, { id: "dp-basics/split", parameters: { batch: 64 }, detached: true, fields: [], question: null }, "an old-style template is completed on import");
  });

  it("an import whose name is taken gets the next free one, as a new notebook does", LIMIT, async () => {
    const titles: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const response = await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}?title=Untitled`, { method: "POST", headers: IPYNB_HEADERS, body: JSON.stringify(NOTEBOOK) });
      assert.equal(response.status, 201);
      titles.push(((await response.json()) as { title: string }).title);
    }
    assert.notEqual(titles[0], titles[1]);
    assert.match(titles[1]!, /^Untitled \(\d+\)$/);
  });

  const badFiles: Array<[string, string, RegExp]> = [
    ["not JSON", "{ this is not json", /JSON/i],
    ["truncated", JSON.stringify(NOTEBOOK).slice(0, 200), /JSON|truncat|end/i],
    ["a wrong type", JSON.stringify({ ...NOTEBOOK, cells: "none" }), /cells/],
    ["deep nesting", `{"nbformat":4,"nbformat_minor":5,"metadata":${"[".repeat(5000)}${"]".repeat(5000)},"cells":[]}`, /nest|deep/i],
  ];
  for (const [name, body, message] of badFiles) {
    it(`refuses ${name} with a clear 400 and writes nothing`, LIMIT, async () => {
      const before = await notebookCount();
      const response = await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", headers: IPYNB_HEADERS, body });
      assert.equal(response.status, 400);
      const reply = (await response.json()) as { error: string };
      assert.match(reply.error, message);
      assert.equal(await notebookCount(), before);
    });
  }

  it("answers 404 for an unknown notebook and 405 for a wrong method", LIMIT, async () => {
    assert.equal((await labFetch(`${server.url}${notebookExportPath("nosuchnotebook")}`)).status, 404);
    assert.equal((await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}`)).status, 405);
  });
});
