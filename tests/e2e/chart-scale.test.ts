/**
 * A million points in Debian's chromium, through the app's own chart panel
 * (the benchmark page, with synthetic data the test can rebuild): the loss
 * line is drawn from a bounded number of points, hover reads the exact value
 * of the nearest real point, and a drag re-samples the zoomed window from the
 * full data; double-click resets.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { syntheticExecution } from "../helpers/chart-synthetic";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { ChartsPage } from "../bench/charts-page/serve";

const LIMIT = { timeout: 180_000 };
const POINTS = 1_000_000;
const BUDGET = 1_200;

/** The benchmark's first-render run, rebuilt here: what the browser holds, point for point. */
function expectedLoss(): { steps: number[]; values: Array<number | null> } {
  const metrics = syntheticExecution("bench-first", [{ tag: "DDP x2", ranks: 2, lossPoints: POINTS, timingSteps: 10_000, stepMs: 40, batch: 64 }]);
  const loss = metrics.series.find((s) => s.name === "loss" && s.rank === 0);
  assert.ok(loss);
  return loss;
}

async function numberAttribute(locator: Locator, name: string): Promise<number> {
  return Number(await locator.getAttribute(name));
}

describe("a million-point loss chart", () => {
  let server: LabServer;
  let chartsPage: ChartsPage;
  let browser: Browser;
  let page: Page;
  before(async () => {
    server = await LabServer.start();
    chartsPage = await ChartsPage.start(server.url);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await chartsPage?.stop();
    await server?.stop();
  });

  it("draws a bounded sample, hovers exact real points, and re-samples a zoomed window", LIMIT, async () => {
    await page.goto(`${chartsPage.url}/bench/charts?scenario=first-render&budget=${BUDGET}`);
    await page.waitForFunction(() => (window as unknown as { __chartBench?: { done: boolean } }).__chartBench?.done === true, undefined, { timeout: 150_000 });
    const chart = page.getByTestId("chart-loss");
    const plot = chart.locator("[data-drawn-points]");
    assert.equal(await numberAttribute(chart, "data-points"), POINTS, "every real point is represented");
    const drawn = await numberAttribute(plot, "data-drawn-points");
    assert.ok(drawn > 0 && drawn <= 2 * BUDGET, `drawn ${drawn}: min and max per bucket, at most ${2 * BUDGET}`);

    // Hover: the readout is a real point of the full series, with its exact stored value.
    const box = (await plot.boundingBox())!;
    const expected = expectedLoss();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    const item = chart.getByTestId("chart-hover").locator(".chart-hover-item").first();
    await item.waitFor();
    const step = await numberAttribute(item, "data-step");
    assert.ok(Number.isInteger(step) && step > 0 && step < POINTS, `step ${step}`);
    assert.equal(Number(await item.getAttribute("data-value")), expected.values[expected.steps.indexOf(step)], "the stored value, not an interpolated one");

    // Zoom: drag across the middle fifth; the window is re-sampled from the full data.
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.5);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5, { steps: 5 });
    await page.mouse.up();
    await chart.getByTestId("chart-zoom-reset").waitFor();
    const inWindow = await numberAttribute(chart, "data-points");
    assert.ok(inWindow > 50_000 && inWindow < 400_000, `${inWindow} real points in the zoomed window`);
    const drawnZoomed = await numberAttribute(plot, "data-drawn-points");
    assert.ok(drawnZoomed > BUDGET / 2 && drawnZoomed <= 2 * BUDGET, `zoomed window drawn from ${drawnZoomed} points, re-sampled at the same budget`);

    await plot.dblclick({ position: { x: box.width * 0.5, y: box.height * 0.5 } });
    await page.waitForFunction(
      (expectedPoints) => document.querySelector('[data-testid="chart-loss"]')?.getAttribute("data-points") === String(expectedPoints),
      POINTS,
    );
  });
});
