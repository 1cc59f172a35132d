/** The pure view models behind the metrics table, the hang report, the list's times and remote edits. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatIdle, formatRelativeTime } from "../../components/shell/model/format";
import { titleFromFileName } from "../../components/shell/model/lab-client";
import { formatMetric, metricsTable, MISSING } from "../../components/charts/model/metrics-table";
import { EditorEchoes, minimalReplacement } from "../../components/notebook/model/text-diff";

describe("metricsTable", () => {
  it("shows step and loss always, then only the known phases present, in a fixed order", () => {
    const table = metricsTable({
      points: 10,
      ranks: [
        { rank: 1, step: 4, values: { loss: 0.25, comm_ms: 3.5, forward_ms: 12.25 } },
        { rank: 0, step: 4, values: { loss: 0.2, forward_ms: 2, memory_mib: 1234.4 } },
      ],
    });
    assert.deepEqual(
      table.columns.map((c) => c.key),
      ["loss", "forward_ms", "comm_ms", "memory_mib"],
    );
    assert.deepEqual(
      table.rows.map((r) => [r.label, r.step, ...r.cells]),
      [
        ["rank 0", "4", "0.2000", "2.00", MISSING, "1.21"],
        ["rank 1", "4", "0.2500", "12.3", "3.50", MISSING],
      ],
    );
    assert.equal(table.caption, "10 points received");
    assert.equal(table.columns.at(-1)?.label, "memory GiB", "1,234 MiB reads as 1.21 GiB, as the memory chart shows it");
  });

  it("shows memory in the unit its largest value reads in, never a tiny MiB rounded to 0", () => {
    const table = metricsTable({ points: 2, ranks: [{ rank: 0, step: 1, values: { memory_mib: 0.0026 } }, { rank: 1, step: 1, values: { memory_mib: 0.001 } }] });
    const memory = table.columns.findIndex((c) => c.key === "memory_mib");
    assert.equal(table.columns[memory]?.label, "memory KiB");
    assert.deepEqual(table.rows.map((r) => r.cells[memory]), ["2.66", "1.02"]);
    const big = metricsTable({ points: 1, ranks: [{ rank: 0, step: 1, values: { memory_mib: 70_000 } }] });
    assert.equal(big.columns.find((c) => c.key === "memory_mib")?.label, "memory GiB");
    assert.equal(big.rows[0]?.cells.at(-1), "68.4");
  });

  it("shows a loss column of dashes when no loss was logged, and a few other metrics by name", () => {
    const table = metricsTable({ points: 1, ranks: [{ rank: 0, step: 0, values: { zeta: 1, acc: 0.5, b: 1, c: 1, d: 1, e: 1 } }] });
    assert.deepEqual(
      table.columns.map((c) => c.key),
      ["loss", "acc", "b", "c", "d"],
    );
    assert.equal(table.rows[0]?.cells[0], MISSING);
    assert.equal(table.caption, "1 point received");
  });

  it("formats numbers by what they measure", () => {
    assert.equal(formatMetric("loss", null), MISSING);
    assert.equal(formatMetric("loss", 0), "0");
    assert.equal(formatMetric("loss", 2.302585), "2.303");
    assert.equal(formatMetric("loss", 0.00001234), "1.23e-5");
    assert.equal(formatMetric("step_ms", 123.456), "123");
    assert.equal(formatMetric("samples", 65536), "65,536");
    assert.equal(formatMetric("lr", 123456.7), "123,457");
  });
});

describe("formatIdle", () => {
  it("says seconds up to two minutes, then minutes", () => {
    assert.equal(formatIdle(62_000), "62 s");
    assert.equal(formatIdle(2_400), "2 s");
    assert.equal(formatIdle(185_000), "3 min 5 s");
  });
});

describe("formatRelativeTime", () => {
  const now = Date.parse("2025-06-01T12:00:00Z");
  const cases: Array<[string, string]> = [
    ["2025-06-01T11:59:50Z", "just now"],
    ["2025-06-01T12:00:30Z", "just now"],
    ["2025-06-01T11:57:00Z", "3 min ago"],
    ["2025-06-01T09:00:00Z", "3 h ago"],
    ["2025-05-31T10:00:00Z", "yesterday"],
    ["2025-05-25T12:00:00Z", "7 days ago"],
    ["2025-01-02T12:00:00Z", "2025-01-02"],
    ["not a date", "unknown"],
  ];
  for (const [iso, text] of cases) it(`${iso} → ${text}`, () => assert.equal(formatRelativeTime(iso, now), text));
});

describe("minimalReplacement", () => {
  it("replaces only what changed", () => {
    assert.equal(minimalReplacement("same", "same"), null);
    assert.deepEqual(minimalReplacement("x = 1\ny = 2\n", "x = 1\ny = 3\n"), { start: 10, end: 11, text: "3" });
    assert.deepEqual(minimalReplacement("abc", "abXc"), { start: 2, end: 2, text: "X" });
    assert.deepEqual(minimalReplacement("aaa", "aa"), { start: 2, end: 3, text: "" });
    assert.deepEqual(minimalReplacement("", "new"), { start: 0, end: 0, text: "new" });
  });

  it("applied to the old text gives the new text, and never splits a surrogate pair", () => {
    const pairs: Array<[string, string]> = [
      ["a😀b", "a😃b"],
      ["😀", "😀😀"],
      ["xyz", "abc"],
      ["print(1)", "print(1)\nprint(2)"],
    ];
    for (const [before, after] of pairs) {
      const r = minimalReplacement(before, after);
      assert.ok(r !== null);
      assert.equal(before.slice(0, r.start) + r.text + before.slice(r.end), after);
      assert.ok(!/[\uDC00-\uDFFF]/.test(r.text.charAt(0)), `starts mid-pair: ${JSON.stringify(r)}`);
    }
  });
});

describe("titleFromFileName", () => {
  it("drops the extension", () => {
    assert.equal(titleFromFileName("DDP experiment.ipynb"), "DDP experiment");
    assert.equal(titleFromFileName("notes.IPYNB"), "notes");
    assert.equal(titleFromFileName(".ipynb"), "");
  });
});

describe("EditorEchoes", () => {
  it("ignores the editor's own typing coming back late, and applies a value from elsewhere", () => {
    const echoes = new EditorEchoes();
    for (const text of ["p", "pr", "pri"]) echoes.typed(text);
    // The store catches up one render at a time, behind the typing: never written back.
    assert.equal(echoes.incoming("p"), null);
    assert.equal(echoes.incoming("pri"), null);
    assert.equal(echoes.incoming("pr"), "pr", "once caught up, an older text is someone else's");
    assert.equal(echoes.incoming("their text"), "their text");
  });
});
