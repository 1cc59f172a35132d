/**
 * Notebooks that last, in Debian's chromium against the real server on its
 * own database: created from the list, autosaved while typing, still there
 * after a reload and after a server restart (outputs included); two tabs
 * editing one cell get a conflict banner instead of a silent overwrite; a
 * deletion can be undone; an unknown id is a plain "not found" page.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { newNotebookFromList } from "../helpers/new-notebook";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";

const LIMIT = { timeout: 120_000 };
const TITLE = "Persistence e2e";

/** The text a cell's Monaco editor shows (lines in order, Monaco's non-breaking spaces as spaces). */
function editorText(page: Page, cellIndex: number): Promise<string> {
  return page
    .getByTestId("cell")
    .nth(cellIndex)
    .locator(".view-lines")
    .evaluate((el) =>
      [...el.querySelectorAll<HTMLElement>(".view-line")]
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map((line) => line.textContent ?? "")
        .join("\n")
        .replace(/\u00a0/g, " "),
    );
}

/**
 * Wait until a cell's editor shows text containing `part`. Monaco renders on
 * animation frames, which a background tab barely gets: the tab is brought
 * to the front and polled on a timer.
 */
async function waitForEditorText(page: Page, cellIndex: number, part: string): Promise<void> {
  await page.bringToFront();
  await page.waitForFunction(
    ({ index, expected }) => {
      const cell = document.querySelectorAll('[data-testid="cell"]')[index];
      return (cell?.querySelector(".view-lines")?.textContent ?? "").replace(/\u00a0/g, " ").includes(expected);
    },
    { index: cellIndex, expected: part },
    { polling: 100 },
  );
}

async function waitForSaved(page: Page): Promise<void> {
  await page.locator('[data-testid="save-status"][data-state="saved"]').waitFor();
}

/** Open a notebook page and wait until it is connected with its editors loaded. */
async function openNotebook(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  await page.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
}

/** Poll a condition over several pages (no fixed sleeps: each check reads the DOM). */
async function pollUntil(what: string, test: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("notebooks that last", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-e2e-persistence-"));
  let server: LabServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** The created notebook's path, e.g. /notebooks/nb-…; the server's port changes on restart. */
  let notebookPath = "";

  before(async () => {
    server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
    browser = await launchBrowser();
    context = await browser.newContext();
    page = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("creates a notebook from the list and autosaves typed code within a second", LIMIT, async () => {
    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    await newNotebookFromList(page, TITLE);
    await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
    notebookPath = new URL(page.url()).pathname;
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    assert.equal(await page.getByTestId("notebook-title").textContent(), TITLE);
    await page.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
    await waitForSaved(page);

    // Record every state the indicator goes through.
    await page.evaluate(() => {
      const el = document.querySelector('[data-testid="save-status"]');
      const states: string[] = [];
      Object.assign(window, { saveStates: states });
      if (el !== null) new MutationObserver(() => states.push(el.getAttribute("data-state") ?? "")).observe(el, { attributes: true });
    });
    await page.getByTestId("cell-editor").first().click();
    await page.keyboard.type("print('persisted', 6 * 7)");
    const typed = Date.now();
    await waitForSaved(page);
    const savedAfterMs = Date.now() - typed;
    const states = await page.evaluate(() => (window as unknown as { saveStates: string[] }).saveStates);
    assert.deepEqual([...new Set(states)], ["saving", "saved"], `indicator states: ${states.join(" → ")}`);
    assert.ok(savedAfterMs < 1_500, `saved ${savedAfterMs} ms after typing stopped`);
    assert.equal(await page.getByTestId("save-status").textContent(), "All changes saved");
  });

  it("keeps the code across a reload", LIMIT, async () => {
    await page.evaluate(() => localStorage.clear()); // what shows must come from the server, not a local draft
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await waitForEditorText(page, 0, "print('persisted', 6 * 7)");
  });

  it("keeps the code and the finished outputs across a server restart", LIMIT, async () => {
    await page.getByTestId("cell-editor").first().click();
    await page.keyboard.press("Shift+Enter");
    const first = page.getByTestId("cell").first();
    await first.getByTestId("output-stream").filter({ hasText: "persisted 42" }).waitFor();
    await page.waitForFunction(() => {
      const cell = document.querySelector('[data-testid="cell"]');
      return cell?.getAttribute("data-run-state") === "idle" && cell.querySelector('[data-testid="cell-status"]') !== null;
    });
    await waitForSaved(page);

    await server.stop();
    await page.locator('[data-testid="connection-status"]:not([data-state="connected"])').waitFor();
    server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });

    const fresh = await browser.newContext(); // no drafts, no cache: only the server's word
    try {
      const after = await fresh.newPage();
      await openNotebook(after, `${server.url}${notebookPath}`);
      assert.equal(await after.getByTestId("notebook-title").textContent(), TITLE);
      await waitForEditorText(after, 0, "print('persisted', 6 * 7)");
      const cell = after.getByTestId("cell").first();
      await cell.getByTestId("output-stream").filter({ hasText: "persisted 42" }).waitFor();
      assert.match((await cell.getByTestId("cell-prompt").textContent()) ?? "", /\[1\]/);
      assert.match((await cell.getByTestId("cell-status").textContent()) ?? "", /^ok/);
    } finally {
      await fresh.close();
    }
    // The old page was pointing at the old port: move it to the new server for the next tests.
    await openNotebook(page, `${server.url}${notebookPath}`);
  });

  it("two tabs editing one cell: the later edit gets the conflict banner, and Keep mine wins in both", LIMIT, async () => {
    const other = await context.newPage();
    try {
      await openNotebook(other, `${server.url}${notebookPath}`);
      const tabs = [page, other];
      for (const tab of tabs) {
        await tab.getByTestId("cell-editor").first().click();
        await tab.keyboard.press("End");
      }
      // Both type before either has saved: both edits are based on the same server text.
      await Promise.all([page.keyboard.type("  # from tab A"), other.keyboard.type("  # from tab B")]);

      const hasBanner = (tab: Page) => tab.getByTestId("cell-conflict").count().then((n) => n > 0);
      const saved = (tab: Page) => tab.locator('[data-testid="save-status"][data-state="saved"]').count().then((n) => n > 0);
      await pollUntil("one tab to get the conflict and the other to save", async () => {
        const [bannerA, bannerB, savedA, savedB] = await Promise.all([hasBanner(page), hasBanner(other), saved(page), saved(other)]);
        return (bannerA && savedB) || (bannerB && savedA);
      });
      const loser = (await hasBanner(page)) ? page : other;
      const winner = loser === page ? other : page;
      const mine = loser === page ? "# from tab A" : "# from tab B";
      const theirs = loser === page ? "# from tab B" : "# from tab A";

      assert.equal(await winner.getByTestId("cell-conflict").count(), 0);
      assert.match((await loser.getByTestId("cell-conflict").textContent()) ?? "", /This cell was changed in another tab\./);
      assert.equal(await loser.getByTestId("save-status").getAttribute("data-state"), "conflict");
      await waitForEditorText(loser, 0, mine); // the refused edit is still on screen

      await loser.getByTestId("conflict-keep-mine").click();
      await loser.getByTestId("cell-conflict").waitFor({ state: "detached" });
      await waitForSaved(loser);
      await waitForEditorText(winner, 0, mine);
      assert.ok(!(await editorText(winner, 0)).includes(theirs), "the other tab now shows the kept text only");
    } finally {
      await other.close();
    }
  });

  it("deletes from the list and Undo brings it back (an open tab shows the deletion meanwhile)", LIMIT, async () => {
    const open = await context.newPage();
    try {
      await openNotebook(open, `${server.url}${notebookPath}`);
      await page.goto(server.url);
      const id = notebookPath.split("/").pop()!;
      const row = page.locator(`[data-testid="notebook-row"][data-notebook-id="${id}"]`);
      await row.waitFor();
      assert.match((await row.textContent()) ?? "", /\d+ cells? · /);

      await row.getByTestId("notebook-delete").click();
      await row.waitFor({ state: "detached" });
      const toast = page.getByTestId("undo-toast");
      assert.match((await toast.textContent()) ?? "", new RegExp(`Deleted ‘${TITLE}’`));
      await page.locator(`[data-testid="deleted-row"][data-notebook-id="${id}"]`).waitFor();
      await open.getByTestId("deleted-banner").waitFor();

      await toast.getByTestId("undo-delete").click();
      await row.waitFor();
      await toast.waitFor({ state: "detached" });
      assert.equal(await page.locator(`[data-testid="deleted-row"][data-notebook-id="${id}"]`).count(), 0);
      await open.getByTestId("deleted-banner").waitFor({ state: "detached" });
    } finally {
      await open.close();
    }
  });

  it("renames from the list and from the notebook's title", LIMIT, async () => {
    const id = notebookPath.split("/").pop()!;
    const row = page.locator(`[data-testid="notebook-row"][data-notebook-id="${id}"]`);
    await row.getByTestId("notebook-rename").click();
    await page.getByTestId("notebook-rename-input").fill("Renamed in the list");
    await page.keyboard.press("Enter");
    await row.getByTestId("notebook-link").filter({ hasText: "Renamed in the list" }).waitFor();

    await row.getByTestId("notebook-link").click();
    await page.waitForURL(new RegExp(`${notebookPath}$`));
    await page.getByTestId("notebook-title").filter({ hasText: "Renamed in the list" }).waitFor();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await page.getByTestId("notebook-title").click();
    await page.getByTestId("notebook-title-input").fill("Renamed in place");
    await page.keyboard.press("Enter");
    await page.getByTestId("notebook-title").filter({ hasText: "Renamed in place" }).waitFor();
    await page.reload();
    await page.getByTestId("notebook-title").filter({ hasText: "Renamed in place" }).waitFor();
  });

  it("imports an .ipynb from the list, and shows the server's reason for a bad one", LIMIT, async () => {
    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    const ipynb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [{ cell_type: "code", id: "imported-1", metadata: {}, source: ["x = 'imported'\n", "print(x)"], outputs: [], execution_count: null }],
    };
    await page.getByTestId("import-file").setInputFiles({ name: "From Jupyter.ipynb", mimeType: "application/x-ipynb+json", buffer: Buffer.from(JSON.stringify(ipynb)) });
    await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    assert.equal(await page.getByTestId("notebook-title").textContent(), "From Jupyter");
    await page.getByTestId("cell-editor").first().locator(".monaco-editor").waitFor();
    await waitForEditorText(page, 0, "x = 'imported'");

    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    await page.getByTestId("import-file").setInputFiles({ name: "broken.ipynb", mimeType: "application/x-ipynb+json", buffer: Buffer.from("{ this is not json") });
    const error = page.getByTestId("list-error");
    await error.waitFor();
    assert.match((await error.textContent()) ?? "", /^Import of broken\.ipynb failed: \S/);
    assert.equal(new URL(page.url()).pathname, "/");
  });

  it("shows what an import could not keep as it was: a cell claiming a template it was not rendered from comes in detached, and says why", LIMIT, async () => {
    await page.goto(server.url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    const ipynb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        {
          cell_type: "code",
          id: "claim",
          metadata: { mgpulab: { template: { id: "dp-basics/split", parameters: { devices: 2, batch_size: 64 } } } },
          source: "import os; print(os.getcwd())",
          outputs: [],
          execution_count: null,
        },
      ],
    };
    await page.getByTestId("import-file").setInputFiles({ name: "Claims.ipynb", mimeType: "application/x-ipynb+json", buffer: Buffer.from(JSON.stringify(ipynb)) });
    await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
    const note = page.getByTestId("import-note").first();
    await note.waitFor();
    assert.match((await note.textContent()) ?? "", /claimed template dp-basics\/split; imported detached: its code was not rendered by this lab/);
    await page.getByTestId("dismiss-import-notes").click();
    await page.getByTestId("import-notes").waitFor({ state: "detached" });
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    assert.equal(await page.getByTestId("import-notes").count(), 0, "the notes are shown once, after the import");
  });

  it("an unknown notebook id is a plain 'not found' page with a way back", LIMIT, async () => {
    await page.goto(`${server.url}/notebooks/no-such-notebook`);
    await page.getByTestId("notebook-not-found").waitFor();
    await page.getByTestId("back-to-list").click();
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
  });
});
