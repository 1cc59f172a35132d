/**
 * IPython habits end to end in Debian's chromium, with the real server and
 * kernel: matplotlib figures as images, %timeit's summary, `!cmd` streamed,
 * IPython's display classes rendered, a tqdm bar kept as one line, Tab
 * completion from the kernel's namespace and Shift+Tab help.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("IPython habits in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let cells = 0;
  let cspViolations: () => Promise<string[]>;

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    page = await browser.newPage();
    cspViolations = await watchCspViolations(page);
    const lab = await connectClient(server.url);
    const created = await lab.sendLab({ op: "create-notebook", title: `habits ${randomUUID().slice(0, 8)}` });
    lab.close();
    assert.ok(created.ok && created.notebook);
    await page.goto(`${server.url}/notebooks/${created.notebook.id}`);
    await page.locator('[data-testid="cell-editor"] .monaco-editor').first().waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Types `code` (one line per entry: Monaco indents on its own) into the last cell. */
  async function typeInLastCell(...lines: string[]): Promise<void> {
    const editor = page.getByTestId("cell-editor").last();
    await editor.locator(".monaco-editor").waitFor();
    await editor.click();
    await page.keyboard.type(lines.join("\n"));
  }

  /** Runs the last cell (Shift+Enter adds the next one) and waits for it to finish; its locator. */
  async function runLastCell() {
    const index = cells++;
    await page.keyboard.press("Shift+Enter");
    await page.waitForFunction((i) => {
      const cell = document.querySelectorAll('[data-testid="cell"]')[i];
      return cell?.getAttribute("data-run-state") === "idle" && cell.querySelector('[data-testid="cell-status"]') !== null;
    }, index);
    return page.getByTestId("cell").nth(index);
  }

  it("shows a matplotlib figure as an image", LIMIT, async () => {
    await typeInLastCell("import matplotlib.pyplot as plt", "plt.plot([1, 4, 9])", "plt.show()");
    const cell = await runLastCell();
    const image = cell.getByTestId("output-image");
    await image.waitFor();
    assert.match((await image.getAttribute("src")) ?? "", /^data:image\/png;base64,iVBOR/);
    assert.ok(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100), "the PNG decodes");
  });

  it("prints %timeit's summary", LIMIT, async () => {
    await typeInLastCell("%timeit -n 20 -r 3 sum(range(100))");
    const cell = await runLastCell();
    const text = (await cell.getByTestId("output-stream").textContent()) ?? "";
    assert.match(text, /± .* per loop \(mean ± std\. dev\. of 3 runs, 20 loops each\)/);
  });

  it("streams a shell command's output", LIMIT, async () => {
    await typeInLastCell("!echo hi");
    const cell = await runLastCell();
    assert.equal(((await cell.getByTestId("output-stream").textContent()) ?? "").trim(), "hi");
  });

  it("renders IPython's HTML display object as HTML", LIMIT, async () => {
    await typeInLastCell("from IPython.display import HTML, Latex, display", "display(HTML('<b id=x>bold</b>'))", "Latex('$x^2$')");
    const cell = await runLastCell();
    const bold = cell.locator('[data-testid="output-html"] b#x');
    await bold.waitFor();
    assert.equal(await bold.textContent(), "bold");
    assert.equal(await cell.getByText("IPython.core.display.HTML object").count(), 0);
    await cell.locator('[data-testid="output-latex"] .katex').waitFor();
  });

  it("keeps a tqdm progress bar on one line, with its bar", LIMIT, async () => {
    await typeInLastCell("from tqdm import tqdm", "for i in tqdm(range(200), mininterval=0): pass");
    const cell = await runLastCell();
    const text = (await cell.getByTestId("output-stream").textContent()) ?? "";
    assert.equal(text.split("\n").filter((line) => /\d+%/.test(line)).length, 1, text);
    // The kernel's tty has a width, so tqdm draws its bar.
    assert.match(text, /100%\|█+\| 200\/200/);
  });

  it("completes lab.la to lab.launch from the kernel with Tab", LIMIT, async () => {
    await typeInLastCell("import mgpulab as lab");
    await runLastCell();
    await typeInLastCell("lab.la");
    await page.keyboard.press("Tab");
    const suggestion = page.locator(".suggest-widget .monaco-list-row", { hasText: /^launch/ }).first();
    await suggestion.waitFor();
    assert.match((await page.locator(".suggest-widget").textContent()) ?? "", /launch_code/);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => {
      const editor = [...document.querySelectorAll('[data-testid="cell-editor"]')].at(-1);
      return (editor?.querySelector(".view-lines")?.textContent ?? "").replace(/\u00a0/g, " ") === "lab.launch";
    });
  });

  it("shows the signature and docstring with Shift+Tab", LIMIT, async () => {
    await page.keyboard.type("(");
    await page.keyboard.press("Shift+Tab");
    const hover = page.locator(".monaco-hover", { hasText: "Signature: lab.launch(target" });
    await hover.waitFor();
    assert.match((await hover.textContent()) ?? "", /rank processes/);
  });

  it("rendered figures, HTML and KaTeX under the Content-Security-Policy with no violation", LIMIT, async () => {
    assert.deepEqual(await cspViolations(), []);
  });
});
