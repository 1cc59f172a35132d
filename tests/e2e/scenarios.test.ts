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

  it("opens a scenario as a notebook and shows verdicts computed from the run", LIMIT, async () => {
    await page.goto(server.url);
    const scenario = page.locator('[data-testid="scenario"][data-scenario-id="params-not-updated"]');
    await scenario.waitFor();
    assert.equal(await page.getByTestId("scenario").count(), 5);
    await scenario.getByTestId("scenario-open").click();
    await page.waitForURL(/\/notebooks\//);
    await page.getByTestId("markdown-rendered").first().waitFor();
    assert.match((await page.getByTestId("markdown-rendered").first().textContent()) ?? "", /parameters? not updated/i);

    // Run on the last cell adds a new one after it, as in Jupyter: hold on to the verdicts cell by position.
    const last = page.getByTestId("cell").nth((await page.getByTestId("cell").count()) - 1);
    await last.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    const output = last.getByTestId("output-stream").filter({ hasText: "verdict:" });
    await output.waitFor({ timeout: 150_000 });
    const text = (await output.textContent()) ?? "";
    assert.match(text, /verdict: (HOLDS|DOES-NOT-HOLD|PARTLY)/);
    assert.match(text, /because: .*\d/, "a verdict is shown with the numbers it came from");
  });
});
