/**
 * A guided scenario in the browser: open it from the list, predict, run, read
 * verdicts with their numbers; the prediction judged right or wrong; the
 * explanation revealed only once its verdicts are shown; and the verdict's
 * numbers equal the charts' (their CSV) of the run the participant watched.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";

const LIMIT = { timeout: 180_000 };

describe("guided scenarios", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("open a scenario, change a parameter, predict, run, and see each verdict with its numbers and the prediction beside it", LIMIT, async () => {
    await page.goto(server.url);
    const scenario = page.locator('[data-testid="scenario"][data-scenario-id="dp-basics"]');
    await scenario.waitFor();
    assert.equal(await page.getByTestId("scenario").count(), 5);
    await scenario.getByTestId("scenario-open").click();
    await page.waitForURL(/\/notebooks\//);
    await page.getByTestId("parameter-form").first().waitFor();

    const splitCell = page.getByTestId("cell").filter({ has: page.locator('[data-testid="parameter-form"][data-template-id="dp-basics/split"]') });
    const verdictsCell = page.getByTestId("cell").filter({ has: page.locator('[data-testid="parameter-form"][data-template-id="dp-basics/verdicts"]') });
    assert.equal(await splitCell.getByTestId("cell-editor").getAttribute("data-read-only"), "true", "form-rendered code is changed through the form");

    // An out-of-range value is refused in place, before anything is sent.
    const batch = splitCell.locator('[data-testid="parameter-field"][data-name="batch_size"] [data-testid="parameter-input"]');
    await batch.fill("100000");
    await batch.press("Enter");
    await splitCell.locator('[data-testid="parameter-error"][data-kind="field"]').filter({ hasText: /batch_size must be an int in \[1, 512\]/ }).waitFor();
    // 62 rows on 4 devices do not divide evenly: the value re-renders this cell and the verdicts cell.
    await batch.fill("62");
    await batch.press("Enter");
    const verdictBatch = verdictsCell.locator('[data-testid="parameter-field"][data-name="batch_size"] [data-testid="parameter-input"]');
    await page.waitForFunction((el) => (el as HTMLInputElement | null)?.value === "62", await verdictBatch.elementHandle());
    await splitCell.locator(".view-lines").filter({ hasText: "62" }).waitFor();

    // Predict first: commit to "uneven chunks" before running.
    const prompt = splitCell.getByTestId("prediction-prompt");
    await prompt.getByTestId("prediction-choice").nth(1).check();
    await prompt.getByTestId("prediction-commit").click();
    await splitCell.getByTestId("prediction-committed").filter({ hasText: /uneven/ }).waitFor();

    await verdictsCell.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    const report = verdictsCell.getByTestId("verdict-report");
    await report.waitFor({ timeout: 150_000 });
    assert.match((await report.getByTestId("verdict-device").textContent()) ?? "", /emulated/i, "a CPU emulation says it is one");
    const split = report.locator('[data-testid="verdict-claim"][data-claim-id="splits-evenly"]');
    // At the default 64 rows the claim holds; 62 rows give chunks of 16, 16, 16 and 14, so it holds only partly.
    assert.equal(await split.getAttribute("data-verdict"), "partly", "62 rows on 4 devices do not split evenly");
    assert.match((await split.textContent()) ?? "", /62 rows on 4 devices/, "the verdict's sentence carries the run's numbers");
    const numbers = (await split.getByTestId("verdict-numbers").textContent()) ?? "";
    assert.match(numbers, /14/, "the uneven last chunk is among the numbers shown");
    assert.match((await split.getByTestId("verdict-prediction").textContent()) ?? "", /uneven/, "the prediction sits beside the measured verdict");
    assert.equal(await split.getByTestId("verdict-prediction-item").getAttribute("data-outcome"), "right", "predicted uneven chunks, measured uneven chunks");
    for (const claim of await report.getByTestId("verdict-claim").all()) {
      assert.match((await claim.getAttribute("data-verdict")) ?? "", /^(holds|does-not-hold|partly|inconclusive)$/);
      assert.ok((await claim.getByTestId("verdict-number").count()) > 0, "every verdict shows its numbers");
    }
  });

  it("run the experiment cells by hand, then the verdicts: a wrong prediction is marked wrong, the explanation waits for its verdict, and the numbers are the charts'", LIMIT, async () => {
    await page.goto(server.url);
    const scenario = page.locator('[data-testid="scenario"][data-scenario-id="dp-basics"]');
    await scenario.getByTestId("scenario-open").click();
    // The first test made a copy: this one starts a fresh one.
    await scenario.getByTestId("scenario-start-fresh").click();
    await page.waitForURL(/\/notebooks\//);
    await page.getByTestId("parameter-form").first().waitFor();
    const cellOf = (templateId: string): Locator =>
      page.getByTestId("cell").filter({ has: page.locator(`[data-template-id="${templateId}"]`) });
    const splitCell = cellOf("dp-basics/split");
    const scalingCell = cellOf("dp-basics/scaling");
    const verdictsCell = cellOf("dp-basics/verdicts");

    // The case: 10 rows on 3 devices.
    for (const [name, value] of [["batch_size", "10"], ["devices", "3"]] as const) {
      const input = splitCell.locator(`[data-testid="parameter-field"][data-name="${name}"] [data-testid="parameter-input"]`);
      await input.fill(value);
      await input.press("Enter");
      await page.waitForFunction(
        ([el, v]) => (el as HTMLInputElement | null)?.value === v,
        [await verdictsCell.locator(`[data-testid="parameter-field"][data-name="${name}"] [data-testid="parameter-input"]`).elementHandle(), value] as const,
      );
    }
    // Text that quotes the values follows the form.
    await page.locator('[data-testid="markdown-rendered"]').filter({ hasText: "batch_size=10 on 3 devices" }).first().waitFor();

    // Predict "the same number on every device" (10 rows on 3 devices cannot split evenly).
    const prompt = splitCell.getByTestId("prediction-prompt");
    await prompt.getByTestId("prediction-choice").first().check();
    await prompt.getByTestId("prediction-commit").click();
    await splitCell.getByTestId("prediction-committed").waitFor();
    const explanation = cellOf("dp-basics/explain-split");
    await explanation.getByTestId("explanation-folded").waitFor();
    assert.doesNotMatch((await explanation.textContent()) ?? "", /ceil/, "the explanation does not give the answer away before the verdict");

    // The participant runs the scaling cell by hand and watches its charts.
    await scalingCell.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    await page.locator(`[data-testid="cell"][data-cell-id="${await scalingCell.getAttribute("data-cell-id")}"][data-run-state="idle"] [data-testid="cell-status"]`).waitFor({ timeout: 150_000 });
    const charts = scalingCell.getByTestId("cell-charts");
    await charts.getByTestId("chart-speedup").waitFor();
    const watched = await charts.getAttribute("data-execution-id");
    assert.ok(watched);

    // Then the verdicts cell: the cells that have not run (split, ...) run first, visibly, under their own cells; scaling does not run again.
    await verdictsCell.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    const report = verdictsCell.getByTestId("verdict-report");
    await report.waitFor({ timeout: 150_000 });
    assert.equal(await scalingCell.getByTestId("cell-charts").getAttribute("data-execution-id"), watched, "the scaling run the participant watched was not replaced");
    assert.ok((await splitCell.getByTestId("cell-status").textContent())?.length, "the split cell ran under its own cell");

    // Wrong, and said so.
    const split = report.locator('[data-testid="verdict-claim"][data-claim-id="splits-evenly"]');
    const judged = split.getByTestId("verdict-prediction-item");
    assert.equal(await judged.getAttribute("data-outcome"), "wrong");
    assert.match((await judged.textContent()) ?? "", /Measured: uneven chunks/);
    assert.equal(await report.locator('[data-claim-id="not-linear"] [data-testid="verdict-prediction"]').getAttribute("data-committed"), "false", "the split prediction is not repeated beside another step's claims");
    // The explanation is revealed now that its verdicts are shown.
    await explanation.getByTestId("markdown-rendered").filter({ hasText: /ceil/ }).waitFor();

    // The speed-up numbers of the verdict are the chart's, from the run the participant watched.
    const scaling = report.locator('[data-testid="verdict-claim"][data-claim-id="not-linear"]');
    assert.equal(await scaling.getAttribute("data-execution-id"), watched, "the verdict names the watched run");
    const download = page.waitForEvent("download");
    await charts.getByTestId("chart-speedup").getByTestId("chart-export-csv").click();
    const csv = (await readFile((await (await download).path())!, "utf8")).trim().split("\n");
    const header = csv[0]!.split(",");
    const speedupByVariant = new Map(csv.slice(1).map((row) => row.split(",")).map((cols) => [cols[header.indexOf("variant")]!, Number(cols[header.indexOf("speedup")])]));
    const showAll = scaling.locator(".verdict-numbers-toggle");
    if ((await showAll.count()) > 0) await showAll.click();
    let compared = 0;
    for (const row of await scaling.locator('[data-testid="verdict-number"][data-source]').all()) {
      const source = JSON.parse((await row.getAttribute("data-source"))!) as { tag: string; statistic: string };
      if (source.statistic !== "speedup") continue;
      const value = Number(await row.getAttribute("data-value"));
      const charted = speedupByVariant.get(source.tag);
      assert.ok(charted !== undefined, `the chart has ${source.tag}`);
      assert.ok(Math.abs(value - charted) <= 1e-9 * Math.max(1, Math.abs(charted)), `${source.tag}: verdict ${value}, chart ${charted}`);
      compared++;
    }
    assert.ok(compared >= 2, `speed-ups compared with the chart (${compared})`);
  });
});
