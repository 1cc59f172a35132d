/**
 * Charts that compare like with like (issue 13), in Debian's chromium: the
 * real CellCharts on the benchmark page's harness, fed live points and
 * device plans as the kernel sends them (no kernel needed), then one real
 * notebook run for the cell's own name. Checked in the drawn page: integer
 * step ticks, legend entries and tick labels whose boxes never intersect,
 * identical lines both visible (their own dash and markers), memory charts
 * that never mix sources with their unit scaled, the noise flag on an
 * impossible speed-up, and no Content-Security-Policy violation.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import type { DevicePlan } from "../../server/core/protocol/kernel-messages";
import type { MetricPointMessage } from "../../server/core/protocol/metrics-model";
import { newNotebookFromList } from "../helpers/new-notebook";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { ChartsPage } from "../bench/charts-page/serve";

const LIMIT = { timeout: 120_000 };
const RSS = "process RSS per rank";
const TRACKED = "tracked tensor bytes per device (parameters, buffers, inputs, outputs; not activations)";
const VARIANTS = ["1 device", "DataParallel x2", "DataParallel x3", "DDP x2"] as const;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

function plan(kind: DevicePlan["kind"], engine: DevicePlan["engine"], count: number, memorySource: string): DevicePlan {
  return {
    kind, engine, count, placement: "auto", gpus: 0, gpusUsed: 0, backend: engine === "DDP" ? "gloo" : null, hostCores: 2,
    devices: [], names: [], streams: false, memorySource, label: `${count}× cpu, emulated ${engine}`, reason: null,
  };
}

/** A 2-core host's sweep where DataParallel x2 comes out 2.9× faster than one device (noise), and DataParallel x2 and x3 log identical losses. */
function sweep(): MetricPointMessage[] {
  const stepMs: Record<string, number> = { "1 device": 100, "DataParallel x2": 100 / 2.9, "DataParallel x3": 80, "DDP x2": 70 };
  const out: MetricPointMessage[] = [];
  for (let step = 0; step < 4; step++) {
    for (const tag of VARIANTS) {
      const ranks = tag === "1 device" ? 1 : tag.endsWith("x3") ? 3 : 2;
      const jitter = step === 0 ? 5 : 1 + 0.1 * ((step % 3) - 1);
      const loss = tag.startsWith("DataParallel") ? 1 / (step + 1) : 1.2 / (step + 1);
      out.push({ tag, rank: 0, step, values: { loss, step_ms: stepMs[tag]! * jitter, samples: 60 / ranks, memory_mib: tag.startsWith("DataParallel") ? 0.0026 : 310 } });
      for (let rank = 1; rank < ranks; rank++) {
        out.push({ tag, rank, step, values: tag.startsWith("DDP") ? { step_ms: stepMs[tag]! * jitter, samples: 60 / ranks, memory_mib: 305 } : { apply_ms: 20 * jitter, samples: 60 / ranks, memory_mib: 0.0013 } });
      }
    }
  }
  return out;
}

async function boxes(items: Locator): Promise<Box[]> {
  const count = await items.count();
  const out: Box[] = [];
  for (let i = 0; i < count; i++) {
    const box = await items.nth(i).boundingBox();
    if (box) out.push(box);
  }
  return out;
}

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
}

function assertDisjoint(list: Box[], what: string): void {
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) assert.ok(!overlaps(list[i]!, list[j]!), `${what} ${i} and ${j} overlap: ${JSON.stringify([list[i], list[j]])}`);
  }
}

describe("charts that compare like with like", () => {
  let server: LabServer;
  let chartsPage: ChartsPage;
  let browser: Browser;
  let page: Page;
  let cspViolations: () => Promise<string[]>;
  before(async () => {
    server = await LabServer.start();
    chartsPage = await ChartsPage.start(server.url);
    browser = await launchBrowser();
    // Narrow, so long labels must wrap or slant.
    page = await browser.newPage({ viewport: { width: 760, height: 1400 } });
    cspViolations = await watchCspViolations(page);
    await page.goto(`${chartsPage.url}/bench/charts?scenario=cell&executionId=like-with-like&running=1&cellName=${encodeURIComponent("Scaling sweep")}`);
    await page.waitForFunction(() => "__chartFeed" in window);
    await page.evaluate(
      ({ points, plans }) => {
        if (!window.__chartFeed) throw new Error("the chart harness has no feed");
        for (const [tag, p] of Object.entries(plans)) window.__chartFeed.plan("like-with-like", tag, p);
        window.__chartFeed.push("like-with-like", points);
        // A user's own untagged run beside them, and a long compared-looking label to wrap.
        window.__chartFeed.push("like-with-like", [0, 1, 2, 3].map((step) => ({ tag: "", rank: 0, step, values: { loss: 0.9 / (step + 1) } })));
        window.__chartFeed.push("like-with-like", [0, 1, 2, 3].map((step) => ({ tag: "DataParallel x2 with a very long variant name that cannot fit beside another on one row", rank: 0, step, values: { loss: 1 / (step + 2) } })));
      },
      {
        points: sweep(),
        plans: {
          "1 device": plan("cpu-emulated", "single", 1, RSS),
          "DDP x2": plan("cpu-emulated", "DDP", 2, RSS),
          "DataParallel x2": plan("cpu-emulated", "DataParallel", 3, TRACKED),
          "DataParallel x3": plan("cpu-emulated", "DataParallel", 3, TRACKED),
        },
      },
    );
    await page.getByTestId("chart-speedup").waitFor();
    await page.getByTestId("chart-memory").first().waitFor();
  });
  after(async () => {
    await browser?.close();
    await chartsPage?.stop();
    await server?.stop();
  });

  it("labels the step axis with whole numbers only", LIMIT, async () => {
    const ticks = await page.getByTestId("chart-loss").locator(".recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value").allTextContents();
    assert.ok(ticks.length >= 2, `ticks: ${ticks.join(" ")}`);
    for (const tick of ticks) assert.match(tick, /^\d+$/, `step tick "${tick}" of ${ticks.join(" ")}`);
  });

  it("keeps identical lines visible: each has its own dash and markers at its own points", LIMIT, async () => {
    const loss = page.getByTestId("chart-loss");
    const a = loss.locator('path.chart-line[data-line="DataParallel x2"]');
    const b = loss.locator('path.chart-line[data-line="DataParallel x3"]');
    const [da, db] = [await a.getAttribute("d"), await b.getAttribute("d")];
    assert.ok(da && da === db, "the two variants' lines coincide exactly");
    assert.notEqual(await a.getAttribute("stroke-dasharray"), await b.getAttribute("stroke-dasharray"), "distinct dash patterns");
    const ma = loss.locator('path.chart-line-markers[data-line="DataParallel x2"]');
    const mb = loss.locator('path.chart-line-markers[data-line="DataParallel x3"]');
    assert.notEqual(await ma.getAttribute("data-marker"), await mb.getAttribute("data-marker"), "distinct marker shapes");
    assert.ok(((await ma.getAttribute("d")) ?? "").length > 0 && ((await mb.getAttribute("d")) ?? "").length > 0, "both lines carry drawn markers");
    // Both markers are painted: the upper line's markers do not hide the lower one's (hollow, or at other points).
    for (const marker of [ma, mb]) {
      const box = (await marker.boundingBox())!;
      assert.ok(box.width > 0 && box.height > 0);
      assert.equal(await marker.getAttribute("fill"), "none");
    }
    const legend = loss.getByTestId("chart-legend-item");
    const dashes = await legend.evaluateAll((items) => items.map((item) => `${item.getAttribute("data-dash") ?? ""}|${item.getAttribute("data-marker") ?? ""}`));
    assert.equal(new Set(dashes).size, dashes.length, `each legend swatch differs: ${dashes.join(", ")}`);
  });

  it("wraps legends and lays out tick labels so no two of them ever overlap", LIMIT, async () => {
    for (const chart of ["chart-loss", "chart-timing", "chart-speedup"]) {
      const items = page.getByTestId(chart).first().getByTestId("chart-legend-item");
      const list = await boxes(items);
      assert.ok(list.length >= 2, chart);
      assertDisjoint(list, `${chart} legend items`);
    }
    const timing = page.getByTestId("chart-timing");
    const ticks = await boxes(timing.locator(".recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value"));
    assert.ok(ticks.length >= 8, `a tick label per device bar (${ticks.length})`);
    assertDisjoint(ticks, "timing tick labels");
    assert.notEqual(await timing.locator("[data-tick-angle]").getAttribute("data-tick-angle"), "0", "long labels in a narrow plot are turned");
  });

  it("shows the spread of step time over each bar, from fastest to slowest step", LIMIT, async () => {
    const spread = page.getByTestId("chart-timing").locator('[data-testid="chart-spread"][data-variant="1 device"]');
    await spread.waitFor();
    const [min, median, max] = await Promise.all(["data-min", "data-median", "data-max"].map(async (name) => Number(await spread.getAttribute(name))));
    assert.deepEqual([min, median, max], [100 * 0.9, 100, 100 * 1.1], "warm-up step left out; ±10 % jitter around 100 ms");
  });

  it("never puts two memory sources in one chart, and scales each chart's unit", LIMIT, async () => {
    const charts = page.getByTestId("chart-memory");
    assert.equal(await charts.count(), 2);
    const seen = new Map<string, string[]>();
    for (let i = 0; i < 2; i++) {
      const chart = charts.nth(i);
      const source = (await chart.getAttribute("data-memory-source"))!;
      const variants = await chart.locator(".recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value").allTextContents();
      seen.set(source, variants);
      assert.match((await chart.locator(".chart-title").textContent()) ?? "", new RegExp(`\\((KiB|MiB)\\): ${source.split(" (")[0]}`));
    }
    assert.deepEqual([...seen.keys()].sort(), [RSS, TRACKED].sort());
    assert.deepEqual(seen.get(RSS), ["1 device", "DDP x2"]);
    assert.deepEqual(seen.get(TRACKED), ["DataParallel x2", "DataParallel x3"]);
    const tracked = page.locator(`[data-testid="chart-memory"][data-memory-source="${TRACKED}"]`);
    assert.equal(await tracked.getAttribute("data-unit"), "KiB", "0.0026 MiB is shown in KiB");
    const ticks = await tracked.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value").allTextContents();
    assert.ok(ticks.some((t) => Number(t) >= 1), `KiB ticks reach the 2.66 KiB bar: ${ticks.join(" ")}`);
  });

  it("flags an impossible speed-up as noise, naming why, and leaves it off the line", LIMIT, async () => {
    const speedup = page.getByTestId("chart-speedup");
    const point = speedup.locator('[data-testid="chart-noise-point"][data-variant="DataParallel x2"]');
    await point.waitFor();
    assert.ok(Number(await point.getAttribute("data-speedup")) > 2.5);
    const flag = speedup.locator('[data-testid="chart-noise-flag"][data-variant="DataParallel x2"]');
    assert.match((await flag.textContent()) ?? "", /noise: 2\.9× on 2 emulated devices is impossible — the host has 2 cores for 3 emulated devices/);
    assert.equal(await speedup.locator('[data-testid="chart-noise-point"][data-variant="DataParallel x3"]').count(), 0, "a possible speed-up is a result");
  });

  it("names the user's untagged run after its cell", LIMIT, async () => {
    const legend = await page.getByTestId("chart-loss").getByTestId("chart-legend-item").allTextContents();
    assert.ok(legend.includes("Scaling sweep"), legend.join(" | "));
    assert.ok(!legend.some((entry) => /untagged/.test(entry)));
  });

  it("names an untagged run in a real notebook after the cell's prompt, with integer step ticks", LIMIT, async () => {
    const notebook = await browser.newPage();
    try {
      await notebook.goto(server.url);
      await notebook.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
      await newNotebookFromList(notebook, "Untagged e2e");
      await notebook.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
      await notebook.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
      await notebook.getByTestId("cell-editor").first().click();
      await notebook.keyboard.type("import mgpulab as lab\nfor step in range(4): lab.log(step, loss=1.0/(step+1))");
      await notebook.keyboard.press("Control+Enter");
      const loss = notebook.getByTestId("cell").first().getByTestId("chart-loss");
      await loss.getByTestId("chart-legend-item").first().waitFor({ timeout: 90_000 });
      await notebook.waitForFunction(() => document.querySelector('[data-testid="chart-loss"]')?.getAttribute("data-points") === "4");
      assert.deepEqual(await loss.getByTestId("chart-legend-item").allTextContents(), ["cell [1]"]);
      const ticks = await loss.locator(".recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value").allTextContents();
      assert.deepEqual(ticks, ["0", "1", "2", "3"]);
    } finally {
      await notebook.close();
    }
  });

  it("keeps a wide tick label (16,000 samples) clear of the axis title beside it", LIMIT, async () => {
    const wide = await browser.newPage({ viewport: { width: 760, height: 1000 } });
    try {
      await wide.goto(`${chartsPage.url}/bench/charts?scenario=cell&executionId=wide-axis&running=1`);
      await wide.waitForFunction(() => "__chartFeed" in window);
      await wide.evaluate(() => {
        if (!window.__chartFeed) throw new Error("the chart harness has no feed");
        window.__chartFeed.push("wide-axis", [0, 1, 2].flatMap((step) => [
          { tag: "1 device, 64× batch", rank: 0, step, values: { step_ms: 50, samples: 16_000 } },
          { tag: "1 device", rank: 0, step, values: { step_ms: 1, samples: 250 } },
        ]));
      });
      const samples = wide.getByTestId("chart-samples");
      await samples.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value").last().waitFor();
      const labels = await samples.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value").allTextContents();
      assert.ok(labels.some((label) => label.includes(",")), `a tick of five digits or more: ${labels.join(" ")}`);
      const title = await samples.locator(".recharts-label").filter({ hasText: /^samples$/ }).first().boundingBox();
      assert.ok(title, "the axis has its title");
      for (const tick of await boxes(samples.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value"))) {
        assert.ok(!overlaps(tick, title), `tick label ${JSON.stringify(tick)} runs into the axis title ${JSON.stringify(title)}`);
      }
    } finally {
      await wide.close();
    }
  });

  it("drew all of it under the Content-Security-Policy with no violation", LIMIT, async () => {
    assert.deepEqual(await cspViolations(), []);
  });
});
