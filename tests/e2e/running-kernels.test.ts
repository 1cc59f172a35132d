/**
 * Running kernels in Debian's chromium against the real server (a cap of one
 * kernel set through MGPULAB_MAX_KERNELS): a run past the cap says what to
 * do; the view, reached from the notebook list, shows the kernel with its
 * memory and viewers and shuts it down; the notebook's page says why its
 * kernel is gone, and the refused notebook runs once there is room.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ESRCH") return false;
    throw error;
  }
}

/** A notebook whose only cell holds `source`, created over the socket as the list page would. */
async function notebookWith(lab: TestClient, title: string, source: string): Promise<{ id: string; cellId: string }> {
  const created = await lab.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const id = created.notebook.id;
  const opened = await lab.send({ op: "open", notebookId: id });
  assert.ok(opened.ok && opened.notebook);
  const cellId = opened.notebook.cells[0]!.id;
  assert.deepEqual(await lab.send({ op: "set-source", notebookId: id, cellId, source }), { ok: true });
  return { id, cellId };
}

async function openNotebook(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  await page.locator('[data-testid="kernel-status"]').waitFor();
}

describe("Running kernels in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let lab: TestClient;

  before(async () => {
    server = await LabServer.start({ MGPULAB_MAX_KERNELS: "1" });
    browser = await launchBrowser();
    lab = await connectClient(server.url);
  });

  after(async () => {
    lab?.close();
    await browser?.close();
    await server?.stop();
  });

  it("refuses a kernel past the cap, shows the running one and shuts it down, and the notebook says why", LIMIT, async () => {
    const first = await notebookWith(lab, "Kernel view e2e", "import os\nprint(os.getpid())");
    assert.deepEqual(await lab.send({ op: "execute", notebookId: first.id, cellIds: [first.cellId] }), { ok: true });
    await lab.waitFor((event) => event.type === "cell-finished" && event.cellId === first.cellId);
    const printed = lab.events.filter((event) => event.type === "cell-stream" && event.cellId === first.cellId).map((event) => (event.type === "cell-stream" ? event.text : "")).join("");
    const pid = Number(printed.trim());
    assert.ok(alive(pid));
    const second = await notebookWith(lab, "Waiting for room", "print('second kernel ran')");
    lab.close(); // from now on the browser's tabs are the only viewers

    const viewer = await browser.newPage();
    await openNotebook(viewer, `${server.url}/notebooks/${first.id}`);
    const waiting = await browser.newPage();
    await openNotebook(waiting, `${server.url}/notebooks/${second.id}`);
    await waiting.getByTestId("toolbar-run-all").click();
    await waiting
      .getByTestId("notice")
      .filter({ hasText: "this lab runs at most 1 kernel; shut one down in Running kernels (1 idle)" })
      .waitFor();
    assert.equal(await waiting.getByTestId("kernel-status").getAttribute("data-state"), "not-started");

    const panel = await browser.newPage();
    await panel.goto(server.url);
    await panel.getByTestId("running-kernels-link").click();
    await panel.waitForURL(`${server.url}/kernels`);
    const row = panel.locator(`[data-testid="kernel-row"][data-notebook-id="${first.id}"]`);
    await row.waitFor();
    assert.equal(await panel.getByTestId("kernel-row").count(), 1);
    assert.equal(await row.getByTestId("kernel-notebook-link").textContent(), "Kernel view e2e");
    assert.equal(await row.getAttribute("data-state"), "idle");
    assert.match((await row.textContent()) ?? "", /1 tab/);
    assert.match((await row.getByTestId("kernel-row-memory").textContent()) ?? "", /^\d+(\.\d)? MB/);
    assert.equal(await row.getByTestId("kernel-row-memory").getAttribute("title"), `pid ${pid}`);
    assert.match((await panel.getByTestId("kernels-summary").textContent()) ?? "", /^1 of at most 1 kernel · .* · unused kernels shut down after 60 min$/);

    await row.getByTestId("kernel-shutdown").click();
    await panel.getByTestId("kernels-empty").waitFor();
    assert.equal(alive(pid), false, "the kernel's process is gone");

    await viewer.locator('[data-testid="kernel-status"][data-state="shutdown"]').waitFor();
    assert.equal(await viewer.getByTestId("kernel-shutdown-reason").textContent(), "shut down from Running kernels; run a cell to start a new kernel");

    await waiting.getByTestId("toolbar-run-all").click();
    await waiting.getByTestId("output-stream").filter({ hasText: "second kernel ran" }).waitFor();

    // Reachable from a notebook too.
    await viewer.getByTestId("running-kernels-link").click();
    await viewer.waitForURL(`${server.url}/kernels`);
    await viewer.locator(`[data-testid="kernel-row"][data-notebook-id="${second.id}"]`).waitFor();
  });
});
