/**
 * What a training run shows while it runs, in Debian's chromium against the
 * real server and kernel: the live metrics table fed by `mgpulab.log`, and
 * the hang report for a cell that stops making progress, with its Interrupt
 * button.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { newNotebookFromList } from "../helpers/new-notebook";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";

const LIMIT = { timeout: 120_000 };

/** A server on its own database, a browser page on a new notebook created through the list. */
async function labWithNotebook(env: Record<string, string>, title: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-e2e-metrics-"));
  const server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir, ...env });
  const browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(server.url);
  await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
  await newNotebookFromList(page, title);
  await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
  await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  await page.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
  const close = async () => {
    await browser.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { page, close };
}

/** Type into the first cell (one line per entry: Monaco would re-indent typed indentation) and run it. */
async function runFirstCell(page: Page, lines: string[]): Promise<void> {
  await page.getByTestId("cell-editor").first().click();
  await page.keyboard.type(lines.join("\n"));
  await page.keyboard.press("Control+Enter");
}

describe("live metrics", () => {
  let lab: Awaited<ReturnType<typeof labWithNotebook>>;
  before(async () => {
    lab = await labWithNotebook({}, "Metrics e2e");
  });
  after(async () => {
    await lab?.close();
  });

  it("shows the latest step and loss of a run that logs with the toolkit", LIMIT, async () => {
    const { page } = lab;
    await runFirstCell(page, ["import mgpulab as lab", "for step in range(5): lab.log(step, loss=1.0/(step+1), forward_ms=2.0)"]);
    const table = page.getByTestId("cell").first().getByTestId("live-metrics");
    await table.locator('[data-testid="live-metrics-row"] td[data-metric="step"]', { hasText: /^4$/ }).waitFor();
    const row = table.getByTestId("live-metrics-row").first();
    assert.equal(await row.locator('td[data-metric="step"]').textContent(), "4");
    assert.match((await row.locator('td[data-metric="loss"]').textContent()) ?? "", /^0\.2(0*)$/);
    assert.match((await row.locator('td[data-metric="forward_ms"]').textContent()) ?? "", /^2(\.0+)?$/);
    assert.match((await table.getByTestId("live-metrics-caption").textContent()) ?? "", /\d+ points? received/);
    await page.waitForFunction(() => document.querySelector('[data-testid="cell"]')?.getAttribute("data-run-state") === "idle");
    assert.equal(await page.getByTestId("cell").first().getByTestId("output-error").count(), 0);
  });
});

describe("hang report", () => {
  let lab: Awaited<ReturnType<typeof labWithNotebook>>;
  before(async () => {
    lab = await labWithNotebook({ MGPULAB_HANG_SECONDS: "2" }, "Hang e2e");
  });
  after(async () => {
    await lab?.close();
  });

  it("shows every process's stack for a silent cell, and Interrupt ends it", LIMIT, async () => {
    const { page } = lab;
    await runFirstCell(page, ["import time; time.sleep(600)"]);
    const cell = page.getByTestId("cell").first();
    const report = cell.getByTestId("output-hang");
    await report.waitFor();
    assert.match((await report.textContent()) ?? "", /No progress for \d+ s — stacks of every process:/);
    // time.sleep is C code: the innermost Python frame is the cell itself, whose source line shows the call.
    assert.match((await report.getByTestId("hang-summary").textContent()) ?? "", /^kernel: in (sleep|<module>)/);
    assert.match((await report.getByTestId("hang-process").first().textContent()) ?? "", /sleep/);
    assert.ok((await report.getByTestId("hang-process").count()) >= 1);
    assert.equal(await cell.getAttribute("data-run-state"), "running");

    await report.getByTestId("hang-interrupt").click();
    await cell.getByTestId("output-error").filter({ hasText: "KeyboardInterrupt" }).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="cell"]')?.getAttribute("data-run-state") === "idle");
    assert.equal(await report.getByTestId("hang-interrupt").isDisabled(), true, "nothing left to interrupt");
  });
});
