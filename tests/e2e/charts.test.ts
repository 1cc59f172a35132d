/**
 * Charts in Debian's chromium against the real server and kernel: a
 * scenario's speed-up sweep draws one loss line per variant and one timing
 * bar per device, live points arrive while a run streams, the CSV export
 * holds exactly the stored data, and charts come back after a reload.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { ExecutionMetrics } from "../../server/core/protocol/metrics-model";
import { newNotebookFromList } from "../helpers/new-notebook";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { labFetch } from "../helpers/lab-session";

const LIMIT = { timeout: 180_000 };

describe("charts", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let cspViolations: () => Promise<string[]>;
  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    page = await browser.newPage({ acceptDownloads: true });
    cspViolations = await watchCspViolations(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("a scenario's speed-up sweep draws a loss line per variant and a timing bar per device, and its CSV is the stored data", LIMIT, async () => {
    await page.goto(server.url);
    const scenario = page.locator('[data-testid="scenario"][data-scenario-id="dp-basics"]');
    await scenario.getByTestId("scenario-open").click();
    await page.waitForURL(/\/notebooks\//);
    const scaling = page.getByTestId("cell").filter({ has: page.locator('[data-testid="parameter-form"][data-template-id="dp-basics/scaling"]') });
    await scaling.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    await page.locator(`[data-testid="cell"][data-cell-id="${await scaling.getAttribute("data-cell-id")}"][data-run-state="idle"] [data-testid="cell-status"]`).waitFor({ timeout: 150_000 });

    const charts = scaling.getByTestId("cell-charts");
    await charts.waitFor();
    assert.match((await charts.getByTestId("chart-device-mode").textContent()) ?? "", /emulat/i, "the panel says the devices are emulated");
    const variants = ["1 device", "DataParallel x2", "DataParallel x3", "DataParallel x4", "DDP x4"];
    const loss = charts.getByTestId("chart-loss");
    await loss.getByTestId("chart-legend-item").last().waitFor();
    const legend = await loss.getByTestId("chart-legend-item").allTextContents();
    for (const variant of variants) assert.ok(legend.some((entry) => entry.includes(variant)), `legend has ${variant}: ${legend.join(" | ")}`);

    const timing = charts.getByTestId("chart-timing");
    for (const [variant, devices] of [["1 device", 1], ["DataParallel x2", 2], ["DataParallel x4", 4], ["DDP x4", 4]] as const) {
      const bars = timing.locator(`[data-testid="chart-bar"][data-variant="${variant}"]`);
      // Waited for, then counted: once the legend was there, a CI run counted no bar of DDP x4 (0 of 4) at once. A chart that never draws them still fails here.
      await bars.nth(devices - 1).waitFor({ timeout: 15_000 }).catch(() => undefined);
      assert.equal(await bars.count(), devices, `${variant}: one bar per device`);
    }

    // The speed-up chart shows the spread too: a whisker per drawn point (noise-flagged points are crosses instead), inside the CSV's range columns.
    const speedup = charts.getByTestId("chart-speedup");
    const flagged = Number(await speedup.getAttribute("data-noise"));
    const whiskers = speedup.getByTestId("chart-speedup-range");
    assert.equal(await whiskers.count(), variants.length - 1 - flagged, "one whisker per drawn N-device point");
    for (const whisker of await whiskers.all()) {
      const [low, high] = [Number(await whisker.getAttribute("data-low")), Number(await whisker.getAttribute("data-high"))];
      assert.ok(low > 0 && low <= high, `${await whisker.getAttribute("data-variant")}: ${low}..${high}`);
    }

    // The CSV of the loss chart is the stored series, point for point.
    const executionId = (await charts.getAttribute("data-execution-id"))!;
    const stored = (await (await labFetch(`${server.url}/api/executions/${executionId}/metrics`)).json()) as ExecutionMetrics;
    const storedLoss = stored.series.filter((s) => s.name === "loss");
    const download = page.waitForEvent("download");
    await loss.getByTestId("chart-export-csv").click();
    const csv = await readFile((await (await download).path())!, "utf8");
    const rows = csv.trim().split("\n");
    const header = rows[0]!.split(",");
    const points = storedLoss.reduce((n, s) => n + s.steps.length, 0);
    assert.equal(rows.length - 1, points, `${header.join(",")}: one row per stored point`);
    assert.equal(Number(await loss.getAttribute("data-points")), points);
    const valueColumn = header.indexOf("value");
    const storedValues = storedLoss.flatMap((s) => s.values.map((v) => String(v))).sort();
    const csvValues = rows.slice(1).map((row) => row.split(",")[valueColumn]!).sort();
    assert.deepEqual(csvValues, storedValues, "values unrounded, as stored");

    // PNG export: a real PNG image of the chart, drawn locally (no network).
    const png = page.waitForEvent("download");
    await loss.getByTestId("chart-export-png").click();
    const image = await readFile((await (await png).path())!);
    assert.deepEqual([...image.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "PNG signature");
    assert.ok(image.length > 2_000, `a drawn chart, not an empty image (${image.length} bytes)`);

    // After a reload the stored run draws the same chart.
    await page.reload();
    const reloaded = page.locator(`[data-testid="cell-charts"][data-execution-id="${executionId}"] [data-testid="chart-loss"]`);
    await reloaded.waitFor();
    await page.waitForFunction(
      ([selector, expected]) => document.querySelector(selector!)?.getAttribute("data-points") === expected,
      [`[data-execution-id="${executionId}"] [data-testid="chart-loss"]`, String(points)],
    );

    // A second run with another batch size; the first is picked from "Compare runs" and overlaid, its parameters in the legend.
    const cellId = (await scaling.getAttribute("data-cell-id"))!;
    const batch = scaling.locator('[data-testid="parameter-field"][data-name="batch_size"] [data-testid="parameter-input"]');
    await batch.fill("32");
    await batch.press("Enter");
    await scaling.locator(".view-lines").filter({ hasText: "batch_size=32" }).waitFor();
    await scaling.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    const second = page.locator(`[data-testid="cell"][data-cell-id="${cellId}"] [data-testid="cell-charts"]:not([data-execution-id="${executionId}"])`);
    await second.waitFor({ timeout: 150_000 });
    await page.locator(`[data-testid="cell"][data-cell-id="${cellId}"][data-run-state="idle"]`).waitFor({ timeout: 150_000 });
    await second.getByTestId("compare-runs").locator("summary").click();
    const previous = second.locator(`[data-testid="compare-run"][data-execution-id="${executionId}"]`);
    await previous.waitFor();
    assert.match((await previous.textContent()) ?? "", /batch_size=64/, "each run offered with its parameters");
    await previous.locator("input").check();
    const overlaid = second.getByTestId("chart-loss").getByTestId("chart-legend-item").filter({ hasText: /batch_size=64/ });
    await overlaid.first().waitFor();
    assert.match((await overlaid.first().textContent()) ?? "", /emulat|cpu/i, "the compared run's device mode is in its legend");
  });

  it("live points reach the chart while the run is still going", LIMIT, async () => {
    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    await newNotebookFromList(page, "Live chart");
    await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
    await page.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
    await page.getByTestId("cell-editor").first().click();
    // The run waits on a file the test creates: it is still running, by construction, while the chart is checked.
    const gate = `/tmp/mgpulab-e2e-gate-${process.pid}`;
    const lines = [
      "import os, time, mgpulab as lab",
      "for step in range(40): lab.log(step, loss=1.0/(step+1), run_id='live', forward_ms=1.0)",
      `while not os.path.exists(${JSON.stringify(gate)}): time.sleep(0.05)`,
      "for step in range(40, 60): lab.log(step, loss=1.0/(step+1), run_id='live', forward_ms=1.0)",
    ];
    await page.keyboard.type(lines.join("\n"));
    await page.keyboard.press("Control+Enter");
    const cell = page.getByTestId("cell").first();
    const loss = cell.getByTestId("chart-loss");
    await loss.waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="chart-loss"]')?.getAttribute("data-points") === "40");
    assert.equal(await cell.getAttribute("data-run-state"), "running", "drawn from live points, before the run ended");
    const { writeFile, rm } = await import("node:fs/promises");
    await writeFile(gate, "");
    try {
      await page.waitForFunction(() => document.querySelector('[data-testid="chart-loss"]')?.getAttribute("data-points") === "60");
    } finally {
      await rm(gate, { force: true });
    }
  });

  it("drew every chart (recharts SVG, PNG export through a blob: image) under the Content-Security-Policy with no violation", LIMIT, async () => {
    assert.deepEqual(await cspViolations(), []);
  });
});
