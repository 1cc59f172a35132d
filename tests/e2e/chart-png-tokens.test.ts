/**
 * Chart chrome (grid, the ideal speed-up line) is drawn in the page's colour
 * tokens, and the PNG export — an image rendered without the page's CSS —
 * still carries those colours: the real CellCharts on the benchmark page's
 * harness (served beside the lab by tests/bench/charts-page/serve.ts), fed live points (no kernel needed), in Debian's chromium. The
 * tokens are set to colours nothing else in a chart uses, so a pixel of them
 * in the PNG can only come from the resolved tokens.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { ChartsPage } from "../bench/charts-page/serve";

const LIMIT = { timeout: 120_000 };
const EXECUTION = "png-tokens";
const GRID = [255, 0, 255] as const;
const REFERENCE = [0, 255, 0] as const;

interface Point {
  tag: string;
  rank: number;
  step: number;
  values: Record<string, number>;
}

function points(): Point[] {
  const out: Point[] = [];
  for (let step = 0; step < 20; step++) {
    for (const tag of ["1 device", "DDP x2"]) out.push({ tag, rank: 0, step, values: { loss: 2 / (step + 1), step_ms: 40 } });
  }
  return out;
}

/** Pixels of the PNG (decoded by the browser) within a small distance of each colour. */
async function countColours(page: Page, png: Buffer, colours: ReadonlyArray<readonly [number, number, number]>): Promise<number[]> {
  return page.evaluate(
    async ({ base64, colours }) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const context = canvas.getContext("2d");
      if (!context) throw new Error("no 2D context to decode the PNG");
      context.drawImage(bitmap, 0, 0);
      const data = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
      return colours.map(([r, g, b]) => {
        let n = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) <= 24) n++;
        }
        return n;
      });
    },
    { base64: png.toString("base64"), colours },
  );
}

describe("chart PNG export and the colour tokens", () => {
  let server: LabServer;
  let chartsPage: ChartsPage;
  let browser: Browser;
  let page: Page;
  before(async () => {
    server = await LabServer.start();
    chartsPage = await ChartsPage.start(server.url);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  });
  after(async () => {
    await browser?.close();
    await chartsPage?.stop();
    await server?.stop();
  });

  it("draws the grid and the ideal line in the page's tokens, and the PNG keeps their values", LIMIT, async () => {
    await page.goto(`${chartsPage.url}/bench/charts?scenario=cell&executionId=${EXECUTION}&running=1`);
    await page.addStyleTag({ content: `:root { --chart-grid: rgb(${GRID.join(",")}); --chart-reference: rgb(${REFERENCE.join(",")}); }` });
    await page.waitForFunction(() => "__chartFeed" in window);
    await page.evaluate(
      ({ id, batch }) => {
        if (!window.__chartFeed) throw new Error("the chart harness has no feed");
        window.__chartFeed.push(id, batch);
      },
      { id: EXECUTION, batch: points() },
    );
    const chart = page.getByTestId("chart-speedup");
    await chart.locator("svg.recharts-surface .recharts-cartesian-grid line").first().waitFor({ state: "attached" });

    // On the page: the SVG says the token, the browser draws its value.
    const onPage = await chart.locator(".recharts-cartesian-grid line").first().evaluate((line) => ({ attribute: line.getAttribute("stroke"), drawn: getComputedStyle(line).stroke }));
    assert.deepEqual(onPage, { attribute: "var(--chart-grid)", drawn: `rgb(${GRID.join(", ")})` });

    const download = page.waitForEvent("download");
    await chart.getByTestId("chart-export-png").click();
    const png = await readFile((await (await download).path())!);
    const [grid, reference] = await countColours(page, png, [GRID, REFERENCE]);
    // A 2× image: each grid line is hundreds of pixels long, the ideal line and its legend swatch too.
    assert.ok(grid! > 500, `grid lines in the token's colour in the PNG (${grid} pixels)`);
    assert.ok(reference! > 100, `the ideal line and its legend swatch in the token's colour in the PNG (${reference} pixels)`);
  });
});
