/** CSV export holds exactly the chart's data: a header, one row per point or bar, numbers unrounded. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { csvField, deviceBarsCsv, lossCsv, speedupCsv, timingCsv, toCsv } from "../../components/charts/model/chart-csv";
import { samplesChart } from "../../server/core/charts/chart-devices";
import { lossLines } from "../../server/core/charts/chart-loss";
import { RunIndex } from "../../server/core/charts/chart-run-index";
import { speedupChart } from "../../server/core/charts/chart-speedup";
import { syntheticSummary } from "../helpers/chart-synthetic";
import { timingChart } from "../../server/core/charts/chart-timing";
import { MetricStore } from "../../server/core/charts/metric-store";

/** A strict parser for what toCsv writes (quoted fields, doubled quotes, LF rows). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  assert.equal(field, "", "ends with a line end");
  return rows;
}

const tricky = [0.1 + 0.2, 1 / 3, 1e-300, -2.5e10, Math.PI, 123456789.12345679, 5e-324, null, 2 ** 53 + 2];

function storeWith(values: Array<number | null>): MetricStore {
  const store = new MetricStore();
  store.load({
    execution: syntheticSummary("e1"),
    series: [
      { tag: 'DDP x2, "fast"', name: "loss", rank: 0, steps: values.map((_, i) => i * 10), values },
      { tag: "DDP x2", name: "step_ms", rank: 0, steps: [0, 1, 2, 3], values: [100, 1 / 3, 2 / 3, 0.1 + 0.2] },
      { tag: "DDP x2", name: "samples", rank: 1, steps: [0, 1, 2], values: [7, 7, 1 / 7] },
    ],
  });
  return store;
}

describe("lossCsv", () => {
  it("writes one row per real point whose numbers parse back to the stored doubles", () => {
    const store = storeWith(tricky);
    const lines = lossLines(store, "e1", []);
    const rows = parseCsv(lossCsv(lines, null));
    assert.deepEqual(rows[0], ["execution_id", "variant", "rank", "step", "value"]);
    assert.equal(rows.length, 1 + tricky.length);
    rows.slice(1).forEach((row, i) => {
      assert.equal(row[1], 'DDP x2, "fast"');
      assert.equal(Number(row[3]), i * 10);
      const expected = tricky[i]!;
      if (expected === null) assert.equal(row[4], "");
      else assert.ok(Object.is(Number(row[4]), expected), `${row[4]} round-trips ${expected}`);
    });
  });

  it("holds only the zoomed window's points", () => {
    const lines = lossLines(storeWith(tricky), "e1", []);
    const rows = parseCsv(lossCsv(lines, { x0: 15, x1: 40 }));
    assert.deepEqual(
      rows.slice(1).map((r) => r[3]),
      ["20", "30", "40"],
    );
  });
});

describe("bar chart CSVs", () => {
  it("write each bar's drawn numbers exactly", () => {
    const index = new RunIndex(storeWith([1]).run("e1"));
    const timing = timingChart(index);
    const rows = parseCsv(timingCsv(timing));
    // Changed on purpose (issue 13): the spread of the time per step follows the means, over the same (warm-up-free) steps.
    assert.deepEqual(rows[0], ["variant", "rank", "other_ms", "total_ms", "points", "spread_metric", "min_ms", "median_ms", "max_ms", "spread_steps"]);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1]!.slice(5), ["step_ms", String(0.1 + 0.2), String(1 / 3), String(2 / 3), "3"]);
    // Only step_ms was logged: the whole (warm-up-free) step is "other". Changed on purpose (issue 27): a bar is
    // the median of its steps, the statistic the verdicts read, not their mean.
    const median = 1 / 3;
    assert.ok(Object.is(Number(rows[1]![2]), median));
    assert.ok(Object.is(Number(rows[1]![3]), median));

    const samples = parseCsv(deviceBarsCsv(samplesChart(index)!));
    assert.deepEqual(samples, [
      ["variant", "rank", "samples_per_step"],
      ["DDP x2", "1", String((7 + 1 / 7) / 2)],
    ]);
  });

  it("writes speed-up rows with the baseline first and the ideal value", () => {
    const store = new MetricStore();
    const col = (tag: string, rank: number, name: string, v: number) => ({ tag, rank, name, steps: [0, 1, 2], values: [v, v, v] });
    store.load({ execution: syntheticSummary("e1"), series: [col("1 device", 0, "step_ms", 30), col("DDP x2", 0, "step_ms", 20), col("DDP x2", 1, "step_ms", 20)] });
    const rows = parseCsv(speedupCsv(speedupChart(new RunIndex(store.run("e1")))!));
    assert.deepEqual(rows, [
      // Changed on purpose (issue 13): a speed-up the devices cannot give says so in "noise" (empty: none, or no plan to judge by).
      // speedup_low/high: the range the steps allow (issue 13: spread on the speed-up chart too).
      ["variant", "family", "devices", "ms_per_step", "speedup", "speedup_low", "speedup_high", "ideal", "noise"],
      ["1 device", "", "1", "30", "1", "1", "1", "1", ""],
      ["DDP x2", "DDP", "2", "20", "1.5", "1.5", "1.5", "2", ""],
    ]);
  });
});

describe("csvField", () => {
  it("quotes what needs it and leaves non-finite numbers empty", () => {
    assert.equal(csvField('a "b", c'), '"a ""b"", c"');
    assert.equal(csvField(" padded"), '" padded"');
    assert.equal(csvField(NaN), "");
    assert.equal(csvField(null), "");
    assert.equal(toCsv(["x"], [[1], [2]]), "x\n1\n2\n");
  });
});
