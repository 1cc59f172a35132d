/** End to end in Debian's chromium: the real server, the real kernel, the real editor. */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("notebook in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  const offOrigin: string[] = [];
  const failed: string[] = [];
  const startedWorkers: string[] = [];
  let cspViolations: () => Promise<string[]>;

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    page = await browser.newPage();
    cspViolations = await watchCspViolations(page);
    page.on("worker", (worker) => startedWorkers.push(worker.url()));
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith("data:") && !request.url().startsWith("blob:")) offOrigin.push(request.url());
    });
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    const lab = await connectClient(server.url);
    const created = await lab.sendLab({ op: "create-notebook", title: `e2e ${randomUUID().slice(0, 8)}` });
    lab.close();
    assert.ok(created.ok && created.notebook);
    await page.goto(`${server.url}/notebooks/${created.notebook.id}`);
    await page.locator('[data-testid="connection-status"][data-state="connected"], [data-testid="cell-editor"] .monaco-editor').first().waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function typeInLastCell(code: string): Promise<void> {
    const editor = page.getByTestId("cell-editor").last();
    await editor.locator(".monaco-editor").waitFor();
    await editor.click();
    await page.keyboard.type(code);
  }

  it("runs typed code with Shift+Enter and shows its output and execution count", LIMIT, async () => {
    await typeInLastCell("print('hello from', 6 * 7)");
    await page.keyboard.press("Shift+Enter");
    const first = page.getByTestId("cell").first();
    await first.getByTestId("output-stream").filter({ hasText: "hello from 42" }).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="cell"]')?.getAttribute("data-run-state") === "idle");
    assert.match((await first.getByTestId("cell-prompt").textContent()) ?? "", /\[1\]/);
    assert.equal(await page.getByTestId("cell").count(), 2, "Shift+Enter on the last cell adds a new one");
    const kernel = page.getByTestId("kernel-status");
    assert.match((await kernel.getAttribute("data-state")) ?? "", /idle|busy/);
  });

  it("shows the value of the last expression and a traceback for an error", LIMIT, async () => {
    await typeInLastCell("1 / 0");
    await page.keyboard.press("Shift+Enter");
    const error = page.getByTestId("cell").nth(1).getByTestId("output-error");
    await error.waitFor();
    assert.match((await error.textContent()) ?? "", /ZeroDivisionError/);
  });

  it("interrupts a running loop from the toolbar", LIMIT, async () => {
    await typeInLastCell("while True: pass");
    await page.keyboard.press("Shift+Enter");
    const cell = page.getByTestId("cell").nth(2);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="cell"]')[2]?.getAttribute("data-run-state") === "running");
    await page.getByTestId("toolbar-interrupt").click();
    await cell.getByTestId("output-error").filter({ hasText: "KeyboardInterrupt" }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="cell"]')[2]?.getAttribute("data-run-state") === "idle");
    await page.locator('[data-testid="kernel-status"][data-state="idle"]').waitFor();
  });

  it("keeps the cursor on screen while a cell grows past the bottom of the window", LIMIT, async () => {
    await page.setViewportSize({ width: 1000, height: 480 });
    try {
      await typeInLastCell(Array.from({ length: 40 }, (_, i) => `x${i} = ${i}`).join("\n"));
      // Once the last line is drawn (the editor grew to hold it), the cursor on it must be inside the window.
      await page.waitForFunction(() => {
        const editor = document.querySelector(".monaco-editor.focused");
        if (!/x39\s*=\s*39/.test((editor?.querySelector(".view-lines")?.textContent ?? "").replace(/\u00a0/g, " "))) return false;
        const cursor = [...(editor?.querySelectorAll(".cursor") ?? [])].find((el) => el.getBoundingClientRect().height > 0);
        if (!cursor) return false;
        const { top, bottom } = cursor.getBoundingClientRect();
        return top >= 0 && bottom <= window.innerHeight;
      });
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
  });

  it("loaded the editor and its worker from this server only", LIMIT, async () => {
    assert.ok(await page.locator(".monaco-editor .mtk1, .monaco-editor .view-line").first().isVisible());
    const workers = await page.evaluate(() => performance.getEntriesByType("resource").map((entry) => entry.name).filter((name) => /worker/i.test(name)));
    assert.ok(workers.length > 0, "Monaco's editor worker was loaded");
    assert.deepEqual(offOrigin, []);
    assert.deepEqual(failed, []);
  });

  it("ran the page, Monaco and its worker under the Content-Security-Policy with no violation", LIMIT, async () => {
    assert.ok(startedWorkers.some((url) => url.startsWith(server.url)), `a worker started from this server: ${startedWorkers.join(", ")}`);
    assert.deepEqual(await cspViolations(), []);
  });
});
