/**
 * Imported outputs obey the live output budget, on the real server: a cell's
 * printed text imported from a .ipynb is kept exactly as a live run of the
 * same code keeps it (head, elided count, tail), huge rich outputs are
 * reduced, the import notes say what went, and an export imports back as is.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_OUTPUT_BUDGET } from "../../server/notebook/output-recorder";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { NOTEBOOK_IMPORT_PATH, notebookExportPath } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { TestNotebook } from "../helpers/test-notebook";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 180_000 };
const LINES = 40_000;
/** Prints about 1.4 M characters: well past the 256 K head and 64 K tail. */
const PRINTING = `for i in range(${LINES}):\n    print(f"step {i:07d} loss {i % 97:02d} |{'#' * (i % 13)}")`;
const printed = Array.from({ length: LINES }, (_, i) => `step ${String(i).padStart(7, "0")} loss ${String(i % 97).padStart(2, "0")} |${"#".repeat(i % 13)}\n`);

function ipynb(outputs: unknown[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: [{ cell_type: "code", id: "train", metadata: {}, execution_count: 1, source: PRINTING, outputs }],
  });
}

describe("imported outputs under the live output budget", () => {
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

  async function importFile(text: string): Promise<{ id: string; notes: string[] }> {
    const response = await labFetch(`${server.url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", body: text, headers: { "Content-Type": "application/x-ipynb+json" } });
    const reply = (await response.json()) as { id: string; notes: string[]; error?: string };
    assert.equal(response.status, 201, reply.error);
    return reply;
  }

  async function outputsOf(notebookId: string): Promise<CellOutput[]> {
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook.cells[0]!.outputs;
  }

  it("keeps exactly what a live run of the same code keeps: head, elided count, tail", LIMIT, async () => {
    const notebook = new TestNotebook();
    let live: CellOutput[];
    try {
      const cellId = await notebook.addCell(PRINTING);
      assert.equal((await notebook.run(cellId)).status, "ok");
      live = notebook.cell(cellId).outputs;
    } finally {
      await notebook.close();
    }
    assert.deepEqual(live.map((output) => output.kind), ["stream", "elided", "stream"], "the live run was cut");
    const total = printed.join("").length;
    assert.deepEqual(live[1], { kind: "elided", elidedBytes: total - DEFAULT_OUTPUT_BUDGET.headChars - DEFAULT_OUTPUT_BUDGET.tailChars });

    // As JupyterLab saves the same run: one stream output, its text a list of lines.
    const { id, notes } = await importFile(ipynb([{ output_type: "stream", name: "stdout", text: printed }]));
    assert.deepEqual(await outputsOf(id), live);
    assert.deepEqual(notes, [
      `cells[0]: elided to the lab's output budget: ${(total - 327_680).toLocaleString("en-US")} characters of stream text (the first 262,144 and the last 65,536 are kept, as for a live run)`,
    ]);

    // Its export imports back unchanged, with nothing more to elide.
    const exported = await (await labFetch(`${server.url}${notebookExportPath(id)}`)).text();
    const again = await importFile(exported);
    assert.deepEqual(await outputsOf(again.id), live);
    assert.deepEqual(again.notes, []);
  });

  it("reduces a huge image to its text form and an elided marker, and says so", LIMIT, async () => {
    const png = "iVBORw0KGgo" + "A".repeat(3 * 1024 * 1024);
    const { id, notes } = await importFile(
      ipynb([
        { output_type: "stream", name: "stdout", text: ["plotting\n"] },
        { output_type: "display_data", metadata: {}, data: { "image/png": png, "text/plain": ["<Figure size 640x480 with 1 Axes>"] } },
        { output_type: "display_data", metadata: {}, data: { "image/png": "iVBORw0KGgoSMALL" } },
      ]),
    );
    assert.deepEqual(await outputsOf(id), [
      { kind: "stream", name: "stdout", text: "plotting\n" },
      { kind: "display", data: { "text/plain": "<Figure size 640x480 with 1 Axes>" } },
      { kind: "elided", elidedBytes: png.length },
      { kind: "display", data: { "image/png": "iVBORw0KGgoSMALL" } },
    ]);
    assert.deepEqual(notes, [`cells[0]: elided to the lab's output budget: outputs[1] image/png (${png.length.toLocaleString("en-US")} characters) (a rich output keeps at most 2,097,152 characters)`]);
  });

  it("keeps each of several concurrent imports whole and apart", LIMIT, async () => {
    const files = Array.from({ length: 3 }, (_, n) => ipynb([{ output_type: "stream", name: "stdout", text: printed.map((line) => `${n} ${line}`) }]));
    const imported = await Promise.all(files.map((file) => importFile(file)));
    for (const [n, { id }] of imported.entries()) {
      const outputs = await outputsOf(id);
      const last = outputs.at(-1);
      assert.ok(last?.kind === "stream" && last.text.endsWith(`${n} ${printed.at(-1)!}`), `import ${n} kept its own tail`);
    }
  });
});
