/** .ipynb parsing without a database: what JupyterLab writes is accepted, and every refusal says where and why. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lines, toIpynb } from "../../server/ipynb/export";
import { parseIpynb } from "../../server/ipynb/import";
import { IpynbError } from "../../server/ipynb/ipynb-error";
import { IPYNB_LIMITS, type IpynbLimits } from "../../server/ipynb/limits";
import { elidedMarker, parseElidedMarker } from "../../server/ipynb/markers";

/** What JupyterLab 4 saves (nbformat 4.5), and an older 4.2 file without cell ids. */
const jupyterLab = {
  cells: [
    { cell_type: "markdown", id: "5f1c2a", metadata: {}, source: ["# Title\n", "text"] },
    {
      cell_type: "code",
      execution_count: 2,
      id: "a1b2c3",
      metadata: { tags: ["x"], collapsed: false },
      outputs: [
        { name: "stdout", output_type: "stream", text: ["hello\n", "world\n"] },
        { data: { "text/plain": ["3"], "application/json": { a: [1, 2] } }, execution_count: 2, metadata: {}, output_type: "execute_result" },
        { data: { "image/png": "iVBORw0KGgo=\n", "text/plain": ["<Figure>"] }, metadata: { needs_background: "light" }, output_type: "display_data" },
        { ename: "ValueError", evalue: "bad", output_type: "error", traceback: ["\u001b[0;31mValueError\u001b[0m", "line 2"] },
      ],
      source: "x = 1\nx + 2",
    },
    { cell_type: "raw", id: "raw1", metadata: {}, source: "raw text" },
  ],
  metadata: { kernelspec: { display_name: "Python 3", language: "python", name: "python3" } },
  nbformat: 4,
  nbformat_minor: 5,
};

function refusal(input: string | Uint8Array, limits: IpynbLimits = IPYNB_LIMITS): IpynbError {
  try {
    parseIpynb(input, limits);
  } catch (error) {
    assert.ok(error instanceof IpynbError, `an IpynbError, got ${String(error)}`);
    return error;
  }
  assert.fail("the file was accepted");
}

const withCell = (cell: unknown) => JSON.stringify({ ...jupyterLab, cells: [cell] });

describe("parseIpynb", () => {
  it("reads what JupyterLab writes", () => {
    const imported = parseIpynb(JSON.stringify(jupyterLab));
    assert.equal(imported.title, null);
    assert.deepEqual(imported.cells.map((cell) => [cell.id, cell.kind, cell.source]), [
      ["5f1c2a", "markdown", "# Title\ntext"],
      ["a1b2c3", "code", "x = 1\nx + 2"],
      ["raw1", "markdown", "raw text"],
    ]);
    assert.deepEqual(imported.cells[1]!.outputs, [
      { kind: "stream", name: "stdout", text: "hello\nworld\n" },
      { kind: "result", executionCount: 2, data: { "text/plain": "3", "application/json": '{"a":[1,2]}' } },
      { kind: "display", data: { "image/png": "iVBORw0KGgo=\n", "text/plain": "<Figure>" } },
      { kind: "error", ename: "ValueError", evalue: "bad", traceback: ["\u001b[0;31mValueError\u001b[0m", "line 2"] },
    ]);
    assert.equal(imported.cells[1]!.executionCount, 2);
    assert.deepEqual(imported.notes, ["cells[2]: a raw cell was imported as markdown"]);
  });

  it("gives ids to cells of older files and repairs duplicates", () => {
    const old = { ...jupyterLab, nbformat_minor: 2, cells: jupyterLab.cells.map(({ id: _id, ...cell }) => cell) };
    const imported = parseIpynb(JSON.stringify(old));
    assert.equal(new Set(imported.cells.map((cell) => cell.id)).size, 3);
    const duplicated = parseIpynb(JSON.stringify({ ...jupyterLab, cells: [jupyterLab.cells[0], jupyterLab.cells[0]] }));
    assert.notEqual(duplicated.cells[0]!.id, duplicated.cells[1]!.id);
    assert.match(duplicated.notes[0]!, /used twice/);
  });

  it("accepts a UTF-8 byte buffer with a BOM", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(jupyterLab))]);
    assert.equal(parseIpynb(bytes).cells.length, 3);
  });

  it("names the field and the reason", () => {
    const cases: Array<[string, string | Uint8Array, RegExp]> = [
      ["not JSON", "{ nope", /not valid JSON/],
      ["truncated", JSON.stringify(jupyterLab).slice(0, 200), /not valid JSON/],
      ["empty", "", /empty/],
      ["not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /not UTF-8/],
      ["a number", "42", /expected object/],
      ["nbformat 3", JSON.stringify({ ...jupyterLab, nbformat: 3 }), /^invalid notebook file at nbformat: only nbformat 4/],
      ["cells missing", JSON.stringify({ nbformat: 4, nbformat_minor: 5 }), /at cells: .*expected array/],
      ["cell type", withCell({ cell_type: "widget", source: "" }), /at cells\[0\]\.cell_type: Invalid discriminator/],
      ["source type", withCell({ cell_type: "code", source: 5, outputs: [] }), /at cells\[0\]\.source: expected a string or an array of strings, got a number/],
      ["source line type", withCell({ cell_type: "code", source: ["a", 1], outputs: [] }), /at cells\[0\]\.source: .*item 1 is a number/],
      ["outputs missing", withCell({ cell_type: "code", source: "" }), /at cells\[0\]\.outputs: .*expected array/],
      ["output type", withCell({ cell_type: "code", source: "", outputs: [{ output_type: "bogus" }] }), /at cells\[0\]\.outputs\[0\]\.output_type/],
      ["stream name", withCell({ cell_type: "code", source: "", outputs: [{ output_type: "stream", name: "stdin", text: "" }] }), /outputs\[0\]\.name/],
      ["mime value", withCell({ cell_type: "code", source: "", outputs: [{ output_type: "display_data", data: { "text/plain": 5 } }] }), /outputs\[0\]\.data\.text\/plain: expected a string/],
      ["traceback", withCell({ cell_type: "code", source: "", outputs: [{ output_type: "error", ename: "E", evalue: "v", traceback: "x" }] }), /traceback/],
      ["execution count", withCell({ cell_type: "code", source: "", outputs: [], execution_count: -1 }), /execution_count/],
      ["cell id", withCell({ cell_type: "code", id: "a b", source: "", outputs: [] }), /cells\[0\]\.id: a cell id has only/],
      ["template", withCell({ cell_type: "code", source: "", outputs: [], metadata: { mgpulab: { template: { id: 5 } } } }), /cells\[0\]\.metadata\.mgpulab\.template\.id/],
      ["deep nesting", withCell({ cell_type: "code", source: "", outputs: [], metadata: { deep: JSON.parse("[".repeat(100) + "]".repeat(100)) } }), /nested more than 64 deep/],
    ];
    for (const [what, input, pattern] of cases) assert.match(refusal(input).message, pattern, what);
  });

  it("enforces size limits before parsing and per string and count", () => {
    const small = { ...IPYNB_LIMITS, maxBytes: 1000, maxSourceChars: 10, maxOutputChars: 20, maxCells: 2, maxOutputsPerCell: 1 };
    assert.match(refusal("x".repeat(1001), small).message, /1001 bytes; at most 1000 bytes/);
    assert.match(refusal(withCell({ cell_type: "code", source: "x".repeat(11), outputs: [] }), small).message, /cells\[0\]\.source: longer than 10/);
    assert.match(refusal(withCell({ cell_type: "code", source: ["12345", "678901"], outputs: [] }), small).message, /longer than 10/);
    const stream = { output_type: "stream", name: "stdout", text: "y".repeat(21) };
    assert.match(refusal(withCell({ cell_type: "code", source: "", outputs: [stream] }), small).message, /outputs\[0\]\.text: longer than 20/);
    assert.match(refusal(withCell({ cell_type: "code", source: "", outputs: [{ ...stream, text: "" }, { ...stream, text: "" }] }), small).message, /more than 1 outputs/);
    const cell = { cell_type: "markdown", source: "" };
    assert.match(refusal(JSON.stringify({ ...jupyterLab, cells: [cell, cell, cell] }), small).message, /^invalid notebook file at cells: more than 2 cells/);
  });

  it("writes nbformat's multiline form and the elided marker, and reads them back", () => {
    assert.deepEqual(lines("a\nb\n\nc"), ["a\n", "b\n", "\n", "c"]);
    assert.deepEqual(lines(""), []);
    assert.equal(parseElidedMarker(elidedMarker(1234)), 1234);
    assert.equal(parseElidedMarker("[mgpulab: 12 bytes of output elided]"), null);
    const text = toIpynb({ title: "t", cells: [{ id: "c", kind: "code", source: "", outputs: [{ kind: "elided", elidedBytes: 99 }], executionCount: null, lastRun: null, template: null }] });
    assert.deepEqual(parseIpynb(text).cells[0]!.outputs, [{ kind: "elided", elidedBytes: 99 }]);
    assert.equal(parseIpynb(text).title, "t");
  });
});
