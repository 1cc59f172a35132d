/**
 * Nothing the participant did is lost, in the browser against the real lab
 * server: a committed prediction survives export → import with its time; a
 * reattach that replaced edits can be undone (and the undo is saved); a
 * scenario opened again offers the existing copy or a fresh, distinctly
 * named one.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 180_000 };
const EDIT = "# my own note 4711";

describe("nothing is lost", () => {
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let client: TestClient;
  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser();
    page = await browser.newPage();
    client = await connectClient(server.url);
  });
  after(async () => {
    client?.close();
    await browser?.close();
    await server?.stop();
  });

  async function scenarioNotebook(scenarioId: string): Promise<NotebookDocument> {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId });
    assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
    return open(created.notebook.id);
  }

  async function open(notebookId: string): Promise<NotebookDocument> {
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook, opened.ok ? "" : opened.error);
    return opened.notebook;
  }

  async function gotoNotebook(notebookId: string): Promise<void> {
    await page.goto(`${server.url}/notebooks/${notebookId}`);
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  }

  const cellLocator = (cellId: string) => page.locator(`[data-testid="cell"][data-cell-id="${cellId}"]`);

  it("a committed prediction survives export and import, committed at its original time", LIMIT, async () => {
    const doc = await scenarioNotebook("dp-basics");
    const split = doc.cells.find((cell) => cell.template?.id === "dp-basics/split")!;
    await gotoNotebook(doc.id);
    const prompt = cellLocator(split.id).getByTestId("prediction-prompt");
    await prompt.getByTestId("prediction-choice").nth(1).check();
    await prompt.getByTestId("prediction-commit").click();
    const committed = cellLocator(split.id).getByTestId("prediction-committed");
    await committed.waitFor();
    const choice = split.template!.question!.choices[1]!;
    const committedAt = await committed.locator("time").getAttribute("datetime");
    assert.ok(committedAt);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-notebook").click()]);
    const file = await readFile((await download.path())!);

    await page.goto(server.url);
    await page.getByTestId("import-file").setInputFiles({ name: download.suggestedFilename(), mimeType: "application/x-ipynb+json", buffer: file });
    await page.waitForURL((url) => url.pathname.startsWith("/notebooks/") && !url.pathname.endsWith(doc.id));
    const importedId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    assert.notEqual(importedId, doc.id);
    assert.equal(await page.getByTestId("import-notes").count(), 0, "nothing was left out of the import");

    const imported = page.locator('[data-testid="cell"]').filter({ has: page.locator('[data-testid="prediction-prompt"][data-question-id="dp-basics/split"]') });
    const shown = imported.getByTestId("prediction-committed");
    await shown.waitFor();
    assert.match((await shown.textContent()) ?? "", new RegExp(`You predicted: ${choice.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal(await shown.locator("time").getAttribute("datetime"), committedAt, "committed at its original time");
    assert.equal(await imported.getByTestId("prediction-commit").count(), 0, "still locked");
    assert.deepEqual((await open(importedId)).predictions, (await open(doc.id)).predictions);
  });

  it("edit → detach → reattach → Undo puts the edited code back, and a reload still shows it", LIMIT, async () => {
    const doc = await scenarioNotebook("params-not-updated");
    const target = doc.cells.find((cell) => cell.template !== null && cell.kind === "code")!;
    await gotoNotebook(doc.id);
    const cell = cellLocator(target.id);

    await cell.getByTestId("template-detach").click();
    await cell.getByTestId("template-detached").waitFor();
    const editor = cell.locator('[data-testid="cell-editor"][data-read-only="false"] .monaco-editor');
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");
    await page.keyboard.type(EDIT);
    // Saved: the server sends every viewer (this test's client too) the cell's new text.
    await client.waitFor((e) => e.type === "cell-source" && e.cellId === target.id && e.source.includes(EDIT));
    const edited = (await open(doc.id)).cells.find((c) => c.id === target.id)!;
    assert.ok(edited.source.includes(EDIT), "the edit is saved before the reattach");

    await cell.getByTestId("template-reattach").click();
    await cell.getByTestId("parameter-form").waitFor();
    await client.waitFor((e) => e.type === "cell-template" && e.cellId === target.id && e.template?.detached === false);
    assert.ok(!(await open(doc.id)).cells.find((c) => c.id === target.id)!.source.includes(EDIT), "the reattach replaced the edit");

    const toast = page.getByTestId("undo-toast");
    assert.match((await toast.textContent()) ?? "", /Reattached the cell/);
    await toast.getByTestId("undo-reattach").click();
    await cell.getByTestId("template-detached").waitFor();
    await cell.locator(".view-lines").filter({ hasText: EDIT }).waitFor();
    await toast.waitFor({ state: "detached" });

    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await cell.getByTestId("template-detached").waitFor();
    await cell.locator(".view-lines").filter({ hasText: EDIT }).waitFor();
    const restored = (await open(doc.id)).cells.find((c) => c.id === target.id)!;
    assert.equal(restored.source, edited.source, "exactly the edited code");
    assert.deepEqual(restored.template, edited.template, "detached as it was");
  });

  it("opening a scenario again offers the existing copy or a fresh one, named apart", LIMIT, async () => {
    const scenario = page.locator('[data-testid="scenario"][data-scenario-id="hangs"]');
    await page.goto(server.url);
    await scenario.getByTestId("scenario-open").click();
    await page.waitForURL(/\/notebooks\//);
    const firstId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    const title = (await open(firstId)).title;

    // Again: a choice, not a silent second copy.
    await page.goto(server.url);
    await scenario.getByTestId("scenario-open").click();
    const choice = scenario.getByTestId("scenario-choice");
    await choice.waitFor();
    const existing = choice.getByTestId("scenario-open-existing");
    assert.match((await existing.textContent()) ?? "", new RegExp(`Open your existing copy ‘${escape(title)}’ \\(last edited just now\\)`));
    assert.match((await choice.getByTestId("scenario-start-fresh").textContent()) ?? "", new RegExp(`Start a fresh copy ‘${escape(title)} \\(2\\)’`));
    await choice.getByTestId("scenario-start-fresh").click();
    await page.waitForURL((url) => url.pathname.startsWith("/notebooks/") && !url.pathname.endsWith(firstId));
    const freshId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    await page.getByTestId("notebook-title").filter({ hasText: `${title} (2)` }).waitFor();

    // And again: the most recent copy is offered, and opened, without making another.
    await page.goto(server.url);
    await page.getByTestId("notebook-rows").waitFor();
    const rows = await page.getByTestId("notebook-row").count();
    await scenario.getByTestId("scenario-open").click();
    await choice.waitFor();
    assert.match((await existing.textContent()) ?? "", new RegExp(`‘${escape(title)} \\(2\\)’`));
    await existing.click();
    await page.waitForURL((url) => url.pathname.endsWith(`/notebooks/${freshId}`));
    await page.goto(server.url);
    await page.getByTestId("notebook-rows").waitFor();
    assert.equal(await page.getByTestId("notebook-row").count(), rows, "opening the existing copy made no new notebook");
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
