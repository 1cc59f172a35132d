/**
 * The everyday notebook features in Debian's chromium, against the real
 * server and kernel: KaTeX, undo of cell deletion (Z), the shortcuts help
 * (H), the command palette, the table of contents, find and replace across
 * cells, the running cell's timer, "New notebook", dark mode, the header at
 * 1024 px, the shared button style and the scenario sources' titles.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { SHORTCUTS } from "../../components/notebook/model/shortcuts";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { renameInPlace } from "../helpers/new-notebook";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 150_000 };

type CellSpec = { kind: "code" | "markdown"; source: string };

/** The page's background luminance, its text's contrast on the header (WCAG), and the theme applied. */
const COLOURS = `(() => {
  const luminance = (css) => {
    const [r, g, b] = (css.match(/\\d+(\\.\\d+)?/g) || []).slice(0, 3).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const bg = luminance(getComputedStyle(document.body).backgroundColor);
  const headerBg = luminance(getComputedStyle(document.querySelector(".notebook-header")).backgroundColor);
  const fg = luminance(getComputedStyle(document.querySelector('[data-testid="notebook"]')).color);
  const contrast = (Math.max(fg, headerBg) + 0.05) / (Math.min(fg, headerBg) + 0.05);
  return { bg, contrast, theme: document.documentElement.dataset.theme };
})()`;

describe("notebook UI features in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let lab: TestClient;
  const failed: string[] = [];

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    lab = await connectClient(server.url);
  });

  after(async () => {
    lab?.close();
    await browser?.close();
    await server?.stop();
  });

  /** A notebook holding `cells`, made over the socket as the page would make it. */
  async function notebookWith(cells: CellSpec[]): Promise<{ id: string; cellIds: string[] }> {
    const created = await lab.sendLab({ op: "create-notebook", title: `ui ${randomUUID().slice(0, 8)}` });
    assert.ok(created.ok && created.notebook);
    const id = created.notebook.id;
    const first = (await open(id)).cells[0]!.id;
    const cellIds = [first];
    const [head, ...rest] = cells;
    if (head!.kind === "markdown") assert.deepEqual(await lab.send({ op: "set-kind", notebookId: id, cellId: first, kind: "markdown" }), { ok: true });
    assert.deepEqual(await lab.send({ op: "set-source", notebookId: id, cellId: first, source: head!.source }), { ok: true });
    for (const [i, cell] of rest.entries()) {
      const cellId = `c-ui-${randomUUID().slice(0, 8)}`;
      const ack = await lab.send({ op: "insert-cell", notebookId: id, index: i + 1, cell: { id: cellId, ...cell } });
      assert.ok(ack.ok, JSON.stringify(ack));
      cellIds.push(cellId);
    }
    return { id, cellIds };
  }

  async function open(notebookId: string): Promise<NotebookDocument> {
    const opened = await lab.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    return opened.notebook;
  }

  async function gotoNotebook(notebookId: string, options: Parameters<Browser["newPage"]>[0] = {}): Promise<Page> {
    const page = await browser.newPage(options);
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${server.url}/notebooks/${notebookId}`);
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await page.locator('[data-testid="cell"]').first().waitFor();
    return page;
  }

  const cellAt = (page: Page, cellId: string) => page.locator(`[data-testid="cell"][data-cell-id="${cellId}"]`);

  /** Selects a cell in command mode (a click beside its editor, on the prompt). */
  async function select(page: Page, cellId: string): Promise<void> {
    await cellAt(page, cellId).getByTestId("cell-prompt").click();
    await page.locator(`[data-testid="cell"][data-cell-id="${cellId}"][data-selected="true"]`).waitFor();
    await page.locator('[data-testid="notebook"][data-mode="command"]').waitFor();
  }

  async function sources(notebookId: string): Promise<string[]> {
    return (await open(notebookId)).cells.map((c) => c.source);
  }

  async function waitForSources(notebookId: string, want: string[]): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (JSON.stringify(await sources(notebookId)) === JSON.stringify(want)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(await sources(notebookId), want);
  }

  it("renders $…$ and $$…$$ with KaTeX (its fonts served here), leaving code spans alone", LIMIT, async () => {
    const { id } = await notebookWith([{ kind: "markdown", source: "Euler: $e^{i\\pi}+1=0$, literally `$x$`, price \\$5\n\n$$\n\\sum_{i=1}^{n} i\n$$" }]);
    const page = await gotoNotebook(id);
    const rendered = page.getByTestId("markdown-rendered").first();
    await rendered.locator(".katex").first().waitFor();
    const tex = await rendered.locator(".math[data-tex]").evaluateAll((spans) => spans.map((s) => s.getAttribute("data-tex")));
    assert.deepEqual(tex, ["e^{i\\pi}+1=0", "\\sum_{i=1}^{n} i"]);
    assert.equal(await rendered.locator(".math .katex-html").count(), 2);
    assert.equal(await rendered.locator(".katex-display").count(), 1);
    assert.equal(await rendered.locator("code").textContent(), "$x$");
    assert.match((await rendered.textContent()) ?? "", /price \$5/);
    const katexFonts = await page.evaluate(async () => {
      await document.fonts.ready;
      return [...document.fonts].filter((f) => f.family.includes("KaTeX") && f.status === "loaded").length;
    });
    assert.ok(katexFonts > 0, "a KaTeX font loaded from this origin");
    assert.deepEqual(failed.filter((f) => /katex|\.woff/i.test(f)), []);
    await page.close();
  });

  it("Z puts deleted cells back, newest first, where they were; it survives a reload", LIMIT, async () => {
    const { id, cellIds } = await notebookWith([
      { kind: "code", source: "a = 1" },
      { kind: "code", source: "b = 2" },
      { kind: "code", source: "c = 3" },
    ]);
    const page = await gotoNotebook(id);
    await select(page, cellIds[1]!);
    await page.keyboard.press("d");
    await page.keyboard.press("d");
    await waitForSources(id, ["a = 1", "c = 3"]);
    await select(page, cellIds[2]!);
    await page.keyboard.press("d");
    await page.keyboard.press("d");
    await waitForSources(id, ["a = 1"]);
    await page.keyboard.press("z");
    await waitForSources(id, ["a = 1", "c = 3"]);
    await page.keyboard.press("z");
    await waitForSources(id, ["a = 1", "b = 2", "c = 3"]);
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="cell"]').length === 3);
    await page.close();
  });

  it("H lists every shortcut from the key table; Esc closes it", LIMIT, async () => {
    const { id, cellIds } = await notebookWith([{ kind: "code", source: "x = 1" }]);
    const page = await gotoNotebook(id);
    await select(page, cellIds[0]!);
    await page.keyboard.press("h");
    const help = page.getByTestId("shortcut-help");
    await help.waitFor();
    assert.equal(await help.getByTestId("shortcut-row").count(), SHORTCUTS.length);
    assert.match((await help.textContent()) ?? "", /Ctrl\+Shift\+P.*Open the command palette/);
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
    await page.close();
  });

  it("Ctrl+Shift+P filters commands as typed; arrows choose, Enter runs, Esc closes", LIMIT, async () => {
    const { id, cellIds } = await notebookWith([{ kind: "code", source: "x = 1" }]);
    const page = await gotoNotebook(id);
    await select(page, cellIds[0]!);
    await page.keyboard.press("Control+Shift+P");
    const palette = page.getByTestId("command-palette");
    await palette.waitFor();
    await page.keyboard.type("insert");
    const shown = await palette.getByTestId("palette-item").evaluateAll((items) => items.map((i) => i.getAttribute("data-command")));
    assert.deepEqual(shown, ["insert-above", "insert-below", "run-insert"]);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await palette.waitFor({ state: "detached" });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="cell"]').length === 2);
    // Inserted below: the original cell stays first.
    assert.equal(await page.getByTestId("cell").first().getAttribute("data-cell-id"), cellIds[0]);
    // From inside an editor too.
    await page.getByTestId("cell-editor").first().click();
    await page.locator('[data-testid="notebook"][data-mode="edit"]').waitFor();
    await page.keyboard.press("Control+Shift+P");
    await palette.waitFor();
    await page.keyboard.press("Escape");
    await palette.waitFor({ state: "detached" });
    await page.close();
  });

  it("the table of contents lists the headings and a click selects and shows the heading's cell", LIMIT, async () => {
    const filler = Array.from({ length: 12 }, (_, i) => ({ kind: "code" as const, source: `x${i} = ${i}\n\n\n\n` }));
    const { id, cellIds } = await notebookWith([{ kind: "markdown", source: "# Intro\ntext" }, ...filler, { kind: "markdown", source: "## Results\n\n### Speed-up" }]);
    const page = await gotoNotebook(id);
    await select(page, cellIds[0]!);
    await page.keyboard.press("t");
    const toc = page.getByTestId("toc-panel");
    await toc.waitFor();
    assert.deepEqual(await toc.getByTestId("toc-entry").allTextContents(), ["Intro", "Results", "Speed-up"]);
    await toc.getByTestId("toc-entry").filter({ hasText: "Results" }).click();
    const target = cellAt(page, cellIds.at(-1)!);
    await page.locator(`[data-testid="cell"][data-cell-id="${cellIds.at(-1)}"][data-selected="true"]`).waitFor();
    const box = await target.boundingBox();
    const height = page.viewportSize()!.height;
    assert.ok(box !== null && box.y < height && box.y + box.height > 0, "the heading's cell is in view");
    await page.close();
  });

  it("Ctrl+F finds across cells, steps through matches and replaces all (saved, undoable)", LIMIT, async () => {
    const { id, cellIds } = await notebookWith([
      { kind: "code", source: "lr = 0.1" },
      { kind: "markdown", source: "The lr matters." },
      { kind: "code", source: "print(lr)" },
    ]);
    const page = await gotoNotebook(id);
    await select(page, cellIds[0]!);
    await page.keyboard.press("Control+f");
    const bar = page.getByTestId("find-bar");
    await bar.waitFor();
    await page.keyboard.type("lr");
    await page.locator('[data-testid="find-count"][data-count="3"]').waitFor();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Enter");
    await cellAt(page, cellIds[1]!).and(page.locator('[data-selected="true"]')).waitFor();
    assert.equal(await page.getByTestId("find-count").textContent(), "2 of 3");
    await page.getByTestId("find-prev").click();
    await cellAt(page, cellIds[0]!).and(page.locator('[data-selected="true"]')).waitFor();
    await page.getByTestId("replace-input").fill("rate");
    await page.getByTestId("replace-all").click();
    await waitForSources(id, ["rate = 0.1", "The rate matters.", "print(rate)"]);
    await page.getByTestId("undo-replace").click();
    await waitForSources(id, ["lr = 0.1", "The lr matters.", "print(lr)"]);
    await page.getByTestId("replace-all").click();
    await waitForSources(id, ["rate = 0.1", "The rate matters.", "print(rate)"]);
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await page.getByTestId("markdown-rendered").filter({ hasText: "The rate matters." }).waitFor();
    await page.close();
  });

  it("a running cell shows a ticking timer and, from its n/total output, an ETA; the final duration after", LIMIT, async () => {
    const source = 'import time\nfor i in range(1, 5):\n    print(f"step {i}/4", flush=True)\n    time.sleep(1)';
    const { id, cellIds } = await notebookWith([{ kind: "code", source }]);
    const page = await gotoNotebook(id);
    const cell = cellAt(page, cellIds[0]!);
    await select(page, cellIds[0]!);
    await page.keyboard.press("Control+Enter");
    const timer = cell.getByTestId("run-timer");
    await cell.locator('[data-testid="run-timer"][data-elapsed-s="1"]').waitFor({ timeout: 120_000 });
    await cell.locator('[data-testid="run-timer"][data-elapsed-s="2"]').waitFor();
    assert.match((await timer.textContent()) ?? "", /^0:0\d/);
    assert.match((await cell.getByTestId("run-eta").textContent()) ?? "", /\d\/4 · about 0:0\d left/);
    await page.locator(`[data-testid="cell"][data-cell-id="${cellIds[0]}"][data-run-state="idle"]`).waitFor({ timeout: 60_000 });
    assert.match((await cell.getByTestId("cell-status").textContent()) ?? "", /\d+(\.\d+)? s/);
    await page.close();
  });

  it("New notebook opens an Untitled notebook at once, renamed in place", LIMIT, async () => {
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    await page.getByTestId("new-notebook").click();
    await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    assert.match((await page.getByTestId("notebook-title").textContent()) ?? "", /^Untitled( \(\d+\))?$/);
    await renameInPlace(page, "Renamed in place");
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    assert.equal(await page.getByTestId("notebook-title").textContent(), "Renamed in place");
    await page.close();
  });

  it("follows prefers-color-scheme: dark, and the toggle overrides it (remembered, applied before paint)", LIMIT, async () => {
    const { id } = await notebookWith([{ kind: "code", source: "x = 1" }]);
    const page = await gotoNotebook(id, { colorScheme: "dark" });
    // A string, not a function: the test runner's transform would name inner functions with a helper the page lacks.
    const colours = (): Promise<{ bg: number; contrast: number; theme: string }> => page.evaluate(COLOURS);
    const dark = await colours();
    assert.equal(dark.theme, "dark");
    assert.ok(dark.bg < 0.05, `dark page background (luminance ${dark.bg})`);
    assert.ok(dark.contrast >= 7, `text contrast ${dark.contrast}`);
    await page.locator(".monaco-editor.vs-dark").first().waitFor();
    await page.getByTestId("theme-toggle").selectOption("light");
    const light = await colours();
    assert.equal(light.theme, "light");
    assert.ok(light.bg > 0.8, `light page background (luminance ${light.bg})`);
    assert.ok(light.contrast >= 7, `text contrast ${light.contrast}`);
    await page.locator(".monaco-editor.vs").first().waitFor();
    // Remembered, and set by the inline script before the page's bundle runs.
    await page.reload({ waitUntil: "commit" });
    await page.waitForFunction(() => document.body !== null);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "light");
    await page.close();
  });

  for (const width of [1024, 1440]) {
    it(`the notebook header fits at ${width} px with the kernel's device text whole`, LIMIT, async () => {
      const { id, cellIds } = await notebookWith([{ kind: "code", source: "x = 1" }]);
      const page = await gotoNotebook(id, { viewport: { width, height: 800 } });
      await select(page, cellIds[0]!);
      await page.keyboard.press("Control+Enter");
      const info = page.getByTestId("kernel-info");
      await info.waitFor({ timeout: 120_000 });
      const layout = await page.evaluate(() => {
        const header = document.querySelector(".notebook-header")!;
        const info = document.querySelector('[data-testid="kernel-info"]') as HTMLElement;
        const overflowing = [...header.querySelectorAll("*")]
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && (r.right > window.innerWidth + 0.5 || r.left < -0.5);
          })
          .map((el) => el.className || el.tagName);
        return {
          overflowing,
          headerScroll: header.scrollWidth - header.clientWidth,
          pageScroll: document.documentElement.scrollWidth - window.innerWidth,
          infoCut: info.scrollWidth > info.clientWidth + 0.5 || info.scrollHeight > info.clientHeight + 0.5,
          ellipsis: getComputedStyle(info).textOverflow === "ellipsis" && getComputedStyle(info).overflow !== "visible",
          text: info.textContent,
        };
      });
      assert.deepEqual(layout.overflowing, []);
      assert.equal(layout.headerScroll, 0);
      assert.ok(layout.pageScroll <= 0, `page scrolls sideways by ${layout.pageScroll}`);
      assert.equal(layout.infoCut, false, `device text cut: ${layout.text}`);
      assert.equal(layout.ellipsis, false);
      assert.match(layout.text ?? "", /Python \d/);
      await page.close();
    });
  }

  it("the scenario rows name their article by title (file name as a detail) and use the shared button class", LIMIT, async () => {
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.locator('[data-testid="scenario-picker"][data-status="ready"]').waitFor();
    const classes = await page.getByTestId("scenario-open").evaluateAll((buttons) => buttons.map((b) => b.className));
    assert.ok(classes.length >= 5);
    for (const c of classes) assert.ok(c.split(/\s+/).includes("button"), c);
    const row = page.locator('[data-testid="scenario"][data-scenario-id="dp-not-starting"]');
    const source = row.getByTestId("scenario-source");
    assert.equal(await source.locator("cite").textContent(), "Why is training not starting with nn.DataParallel?");
    assert.match((await source.textContent()) ?? "", /000_3b7eff0f44992b59\.txt/);
    await page.close();
  });
});
