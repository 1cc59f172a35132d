/** A guided scenario in the browser: open it from the list, run its verdicts cell, read verdicts with their numbers. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
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
    for (const claim of await report.getByTestId("verdict-claim").all()) {
      assert.match((await claim.getAttribute("data-verdict")) ?? "", /^(holds|does-not-hold|partly)$/);
      assert.ok((await claim.getByTestId("verdict-number").count()) > 0, "every verdict shows its numbers");
    }
  });
});
