/** The .ipynb export's chart: a self-contained SVG of loss and per-device step time, or nothing. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticExecution, syntheticSummary } from "../helpers/chart-synthetic";
import { renderExecutionChartsSvg } from "../../server/core/charts/static/static-chart";

const metrics = syntheticExecution("e1", [
  { tag: "1 device", ranks: 1, lossPoints: 5_000, timingSteps: 20, stepMs: 100, batch: 64 },
  { tag: "DDP x2 <fast> & \"quoted\"", ranks: 2, lossPoints: 5_000, timingSteps: 20, stepMs: 60, batch: 64 },
]);

describe("renderExecutionChartsSvg", () => {
  it("is one SVG root with titles, axes and legends, and no script or external reference", () => {
    const svg = renderExecutionChartsSvg(metrics);
    assert.ok(svg);
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="720" height="\d+" viewBox="0 0 720 \d+"/);
    assert.ok(svg.endsWith("</svg>"));
    assert.equal(svg.match(/<svg\b/g)?.length, 1);
    assert.doesNotMatch(svg, /<script|javascript:|href=|@import|url\(|on[a-z]+=/i);
    for (const label of ["Loss vs step", "Step time per device (ms)", ">loss<", ">step<", ">ms<", ">1 device<", ">forward<", ">optimizer<", "CPU-emulated"]) {
      assert.ok(svg.includes(label), label);
    }
  });

  it("escapes labels", () => {
    const svg = renderExecutionChartsSvg(metrics)!;
    assert.ok(svg.includes(">DDP x2 &lt;fast&gt; &amp; &quot;quoted&quot;<"));
    assert.ok(!svg.includes("<fast>"));
  });

  it("draws one stacked bar group per device per variant and a path per loss line, downsampled", () => {
    const perRank = structuredClone(metrics);
    const rank0 = perRank.series.find((s) => s.name === "loss" && s.tag.startsWith("DDP"))!;
    perRank.series.push({ ...rank0, rank: 1 });
    const svg = renderExecutionChartsSvg(perRank)!;
    assert.equal(svg.match(/<g class="bar">/g)?.length, 3);
    const lineGroup = /<g class="lines">(.*?)<\/g>/.exec(svg)?.[1] ?? "";
    const paths = [...lineGroup.matchAll(/<path d="([^"]*)"/g)].map((m) => m[1]!);
    assert.equal(paths.length, 3, "a line per variant, per rank where ranks logged loss");
    assert.ok(svg.includes("rank 1</text>"));
    for (const d of paths) assert.ok(d.split(/[ML]/).length - 1 <= 600, "at most the point budget");
    assert.ok(svg.length < 200_000, `${svg.length} characters`);
  });

  it("is null when the execution logged no series", () => {
    assert.equal(renderExecutionChartsSvg({ execution: syntheticSummary("e0"), series: [] }), null);
    assert.equal(renderExecutionChartsSvg({ execution: syntheticSummary("e0"), series: [{ tag: "", name: "loss", rank: 0, steps: [], values: [] }] }), null);
  });
});
