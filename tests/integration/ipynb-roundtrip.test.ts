/**
 * .ipynb through the real database and Debian's python3-nbformat: exports
 * validate against the nbformat schema, survive a save by nbformat (what
 * JupyterLab uses) and import back equal; 200 malformed files are refused
 * with a reason and write nothing.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { exportNotebook, toIpynb } from "../../server/ipynb/export";
import { importIpynb, parseIpynb } from "../../server/ipynb/import";
import { IpynbError } from "../../server/ipynb/ipynb-error";
import type { CellInput } from "../../server/persistence/types";
import { createTestDatabase, type TestDatabase } from "./persistence-harness";

const PYTHON = "/usr/bin/python3";
const VALIDATE = "import nbformat,sys; nbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))";
/** Validates each notebook of a JSON list and writes it back with nbformat.writes, as Jupyter saves. */
const VALIDATE_AND_RESAVE = `
import json, sys, nbformat
out = []
for text in json.load(sys.stdin):
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    out.append(nbformat.writes(nb))
json.dump(out, sys.stdout)
`;

function python(script: string, input: string): string {
  const result = spawnSync(PYTHON, ["-c", script], { input, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  assert.equal(result.status, 0, `python3-nbformat refused the export:\n${result.stderr}`);
  return result.stdout;
}

let t: TestDatabase;
before(async () => {
  const check = spawnSync(PYTHON, ["-c", "import nbformat"]);
  assert.equal(check.status, 0, "python3-nbformat is missing: apt-get install -y python3-nbformat");
  t = await createTestDatabase();
});
after(() => t.close());

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const richCells: CellInput[] = [
  { id: "intro", kind: "markdown", source: "# DataParallel basics\n\nPredict first: *is DP model parallelism?*" },
  {
    id: "setup-1",
    kind: "code",
    source: "import torch\nprint(torch.__version__)",
    outputs: [
      { kind: "stream", name: "stdout", text: "1.13.1\n" },
      { kind: "stream", name: "stderr", text: "warning: no CUDA\nsecond line" },
    ],
    executionCount: 1,
    lastRun: { status: "ok", durationMs: 812.5 },
  },
  {
    id: "train_dp",
    kind: "code",
    source: "run(devices=4, batch=64)",
    template: {
      id: "dp-basics/split",
      parameters: { devices: 4, batch: 64, lr: 0.01, backend: "gloo", uneven: false },
      detached: true,
      fields: [{ name: "devices", type: "int", default: 4, help: "devices", min: 1, max: 8 }],
      question: { id: "dp-basics/split", text: "How many rows per device?", choices: ["even", "uneven"], claims: ["splits-evenly"] },
    },
    outputs: [
      { kind: "stream", name: "stdout", text: "step 0\n" },
      { kind: "elided", elidedBytes: 1048576 },
      { kind: "stream", name: "stdout", text: "step 999\n" },
      { kind: "result", executionCount: 2, data: { "text/plain": "{'per_device': [16, 16, 16, 16]}" } },
      { kind: "display", data: { "image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>" } },
    ],
    executionCount: 2,
    lastRun: { status: "ok", durationMs: 15234 },
  },
  {
    id: "broken",
    kind: "code",
    source: "1/0",
    outputs: [{ kind: "error", ename: "ZeroDivisionError", evalue: "division by zero", traceback: ["\u001b[0;31m---------\u001b[0m", "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"] }],
    executionCount: 3,
    lastRun: { status: "error", durationMs: 3 },
  },
  { id: "never-run", kind: "code", source: "", outputs: [], executionCount: null, lastRun: null },
  { id: "unicode", kind: "markdown", source: "Ünïcödé — 漢字 — 🚀\r\nwindows line" },
];

describe("ipynb round trip", () => {
  it("exports a valid nbformat 4.5 file that imports back equal, also after nbformat re-saves it", async () => {
    const original = await t.notebooks.create({ ownerId: t.ownerId, title: "DP basics", cells: richCells });
    const { fileName, text } = await exportNotebook(t.notebooks, original.id);
    assert.equal(fileName, "DP basics.ipynb");
    python(VALIDATE, text); // the exact check, on the exact file

    const [resaved] = JSON.parse(python(VALIDATE_AND_RESAVE, JSON.stringify([text]))) as string[];
    for (const file of [text, resaved!]) {
      const { notebook, notes } = await importIpynb(t.notebooks, file, { ownerId: t.ownerId, title: "fallback" });
      assert.deepEqual(notes, []);
      assert.equal(notebook.title, "DP basics");
      assert.notEqual(notebook.id, original.id);
      assert.deepEqual(notebook.cells, original.cells);
    }
  });

  it("exports of generated notebooks all validate (one python process for 30 files)", async () => {
    const files: string[] = [];
    for (let n = 0; n < 30; n++) {
      const cells: CellInput[] = Array.from({ length: n % 7 }, (_, i) => ({
        id: `g${n}-${i}`,
        kind: i % 3 === 0 ? "markdown" : "code",
        source: "x".repeat(i) + "\n".repeat(n % 3),
        outputs: i % 3 === 0 ? [] : [{ kind: "stream", name: i % 2 ? "stdout" : "stderr", text: `${n}\n${i}` }],
        executionCount: i % 3 === 0 ? null : i,
      }));
      files.push(toIpynb({ title: `g${n}`, cells: cells.map((cell) => ({ outputs: [], executionCount: null, lastRun: null, template: null, ...cell })) }));
    }
    const resaved = JSON.parse(python(VALIDATE_AND_RESAVE, JSON.stringify(files))) as string[];
    assert.equal(resaved.length, 30);
  });

  it("refuses 200 malformed, truncated and hostile files with a reason, without a crash and without writing", async () => {
    const base = JSON.parse(toIpynb({ title: "base", cells: richCells.map((cell) => ({ outputs: [], executionCount: null, lastRun: null, template: null, ...cell })) })) as Record<string, unknown>;
    const baseText = JSON.stringify(base);
    const before_ = await t.counts();
    const cases = malformedNotebooks(base, baseText);
    assert.ok(cases.length >= 200, `${cases.length} cases`);
    const reasons = new Set<string>();
    for (const [what, input] of cases) {
      await assert.rejects(
        importIpynb(t.notebooks, input, { ownerId: t.ownerId, title: "hostile" }),
        (error: unknown) => {
          assert.ok(error instanceof IpynbError, `${what}: expected IpynbError, got ${String(error)}`);
          assert.ok(error.reason.length > 0);
          reasons.add(`${error.path.replace(/\d+/g, "N")}: ${error.reason.replace(/\d+/g, "N").slice(0, 60)}`);
          return true;
        },
        what,
      );
    }
    console.log(`# ${cases.length} malformed files refused, ${reasons.size} distinct reasons`);
    if (process.env.SHOW_REASONS) console.log([...reasons].join("\n"));
    assert.deepEqual(await t.counts(), before_, "nothing was written");
    assert.ok(reasons.size >= 15, `varied reasons (${reasons.size})`);
  });
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Deterministic mutations of a valid notebook, each of which must be refused. */
function malformedNotebooks(base: Record<string, unknown>, baseText: string): Array<[string, string | Uint8Array]> {
  let seed = 1234;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const clone = () => structuredClone(base) as { [key: string]: Json };
  const cases: Array<[string, string | Uint8Array]> = [];
  const codeCellIndexes = (nb: { [key: string]: Json }) =>
    (nb.cells as Array<{ [key: string]: Json }>).flatMap((cell, index) => (cell.cell_type === "code" && (cell.outputs as Json[]).length > 0 ? [index] : []));

  // Wrong types at fields the lab reads.
  const wrongValues: Json[] = [42, "text", null, true, [], {}, [1, 2], { a: 1 }, -1, 1.5];
  const fieldPaths: Array<(nb: { [key: string]: Json }) => [Json & object, string | number]> = [
    (nb) => [nb, "nbformat"],
    (nb) => [nb, "nbformat_minor"],
    (nb) => [nb, "cells"],
    (nb) => [(nb.cells as Json[]), random(6)],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[random(6)]!, "cell_type"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[random(6)]!, "source"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[1]!, "outputs"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[3]!, "execution_count"],
    (nb) => {
      const outputs = (nb.cells as Array<{ [key: string]: Json }>)[2]!.outputs as Array<{ [key: string]: Json }>;
      const output = outputs[random(outputs.length)]!;
      const keys = Object.keys(output).filter((key) => key !== "metadata");
      return [output, keys[random(keys.length)]!];
    },
    (nb) => [((nb.cells as Array<{ [key: string]: Json }>)[4]!.outputs as Array<{ [key: string]: Json }>)[0]!, "traceback"],
    (nb) => [(((nb.cells as Array<{ [key: string]: Json }>)[2]!.metadata as { [key: string]: Json }).mgpulab as { [key: string]: Json }).template as { [key: string]: Json }, "id"],
    (nb) => [(((nb.cells as Array<{ [key: string]: Json }>)[2]!.metadata as { [key: string]: Json }).mgpulab as { [key: string]: Json }), "lastRun"],
  ];
  let attempts = 0;
  while (cases.length < 100 && attempts < 3000) {
    attempts++;
    const nb = clone();
    const [target, key] = fieldPaths[random(fieldPaths.length)]!(nb);
    const value = wrongValues[random(wrongValues.length)]!;
    (target as Record<string | number, Json>)[key] = value;
    const text = JSON.stringify(nb);
    if (isAcceptable(text)) continue;
    cases.push([`wrong type ${String(key)}=${JSON.stringify(value)}`, text]);
  }

  // Missing fields.
  const required: Array<(nb: { [key: string]: Json }) => [{ [key: string]: Json }, string]> = [
    (nb) => [nb, "cells"],
    (nb) => [nb, "nbformat"],
    (nb) => [nb, "nbformat_minor"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[random(6)]!, "cell_type"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[random(6)]!, "source"],
    (nb) => [(nb.cells as Array<{ [key: string]: Json }>)[codeCellIndexes(nb)[random(3)]!]!, "outputs"],
    (nb) => {
      const outputs = (nb.cells as Array<{ [key: string]: Json }>)[2]!.outputs as Array<{ [key: string]: Json }>;
      const output = outputs[random(outputs.length)]!;
      const keys = Object.keys(output).filter((key) => key !== "metadata" && key !== "execution_count");
      return [output, keys[random(keys.length)]!];
    },
  ];
  for (let i = 0; i < 30; i++) {
    const nb = clone();
    const [target, key] = required[i % required.length]!(nb);
    delete target[key];
    cases.push([`missing ${key}`, JSON.stringify(nb)]);
  }

  // Truncated JSON, at random points and as bytes cut inside a UTF-8 sequence.
  const lastBrace = baseText.lastIndexOf("}");
  for (let i = 0; i < 50; i++) cases.push([`truncated at ${i}`, baseText.slice(0, 1 + random(lastBrace - 1))]);
  const unicodeAt = Buffer.from(baseText).indexOf(Buffer.from("漢"));
  cases.push(["cut inside a UTF-8 sequence", Buffer.from(baseText).subarray(0, unicodeAt + 1)]);

  // Not JSON / not a notebook at all.
  for (const [what, text] of [
    ["empty", ""],
    ["whitespace", "   \n"],
    ["plain text", "print('hello')"],
    ["a number", "4"],
    ["an array", "[]"],
    ["null", "null"],
    ["a string", '"notebook"'],
    ["python notebook v3", JSON.stringify({ ...base, nbformat: 3 })],
    ["future nbformat 5", JSON.stringify({ ...base, nbformat: 5 })],
    ["NaN literal", baseText.replace('"nbformat": 4', '"nbformat": NaN').replace('"nbformat":4', '"nbformat":NaN')],
    ["trailing garbage", baseText + "}"],
    ["comment", "// c\n" + baseText],
  ] as const) {
    cases.push([what, text]);
  }
  cases.push(["invalid UTF-8 bytes", Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])]);
  cases.push(["random bytes", Buffer.from(Array.from({ length: 512 }, () => random(256)))]);

  // Deep nesting: in metadata, in outputs, and as bare brackets.
  for (const depth of [65, 100, 1000, 100_000]) {
    const nb = clone();
    (nb.metadata as { [key: string]: Json }).deep = JSON.parse("[".repeat(Math.min(depth, 5000)) + "]".repeat(Math.min(depth, 5000))) as Json;
    cases.push([`nested ${depth}`, depth > 5000 ? "[".repeat(depth) + "]".repeat(depth) : JSON.stringify(nb)]);
  }
  cases.push(["nested objects", `{"a":`.repeat(200) + "1" + "}".repeat(200)]);

  // Giant strings and counts.
  const giant = (chars: number) => "x".repeat(chars);
  {
    const nb = clone();
    ((nb.cells as Array<{ [key: string]: Json }>)[1]!.outputs as Array<{ [key: string]: Json }>)[0]!.text = giant(100 * 1024 * 1024);
    cases.push(["100 MB stream text", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    (nb.cells as Array<{ [key: string]: Json }>)[1]!.source = giant(1_000_001);
    cases.push(["1M+1 source", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    (nb.cells as Array<{ [key: string]: Json }>)[1]!.source = Array.from({ length: 2000 }, () => giant(600));
    cases.push(["source as 2,000 lines of 600", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    ((nb.cells as Array<{ [key: string]: Json }>)[2]!.outputs as Array<{ [key: string]: Json }>)[4]!.data = { "image/png": giant(16 * 1024 * 1024 + 1) };
    cases.push(["16 MiB + 1 image", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    nb.cells = Array.from({ length: 10_001 }, () => ({ cell_type: "markdown", metadata: {}, source: "" }));
    cases.push(["10,001 cells", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    (nb.cells as Array<{ [key: string]: Json }>)[1]!.outputs = Array.from({ length: 10_001 }, () => ({ output_type: "stream", name: "stdout", text: "" }));
    cases.push(["10,001 outputs", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    const data: { [key: string]: Json } = {};
    for (let i = 0; i < 65; i++) data[`text/x-${i}`] = "";
    ((nb.cells as Array<{ [key: string]: Json }>)[2]!.outputs as Array<{ [key: string]: Json }>)[3]!.data = data;
    cases.push(["65 mime types", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    (nb.cells as Array<{ [key: string]: Json }>)[1]!.id = giant(65);
    cases.push(["65-char cell id", JSON.stringify(nb)]);
  }
  {
    const nb = clone();
    (nb.metadata as { [key: string]: Json }).mgpulab = { title: giant(201) };
    cases.push(["201-char title", JSON.stringify(nb)]);
  }
  return cases;
}

/** True when the lab would import `text` (used to skip mutations that happen to stay valid). */
function isAcceptable(text: string): boolean {
  try {
    parseIpynb(text); // pure: no database involved

    return true;
  } catch (error) {
    if (error instanceof IpynbError) return false;
    throw error;
  }
}
