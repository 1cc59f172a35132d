/**
 * A workshop from its participants' side, in Debian's chromium against the
 * real server: a facilitator (a socket client) makes a led workshop for one
 * participant at a time; the first to join gets their notebook, the second
 * waits as number 1 in the queue until the facilitator makes room, and their
 * page then shows the notebook without a reload; a broadcast preset is
 * applied to the form from the notebook page; the led notebook shows step 1
 * until the facilitator reveals step 2; and the end says so.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { WorkshopView } from "../../server/core/protocol/accounts-model";
import type { LabAnswer, LabOp, LabReply } from "../../server/core/protocol/ops-lab";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { signIn } from "../helpers/lab-session";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 180_000 };
const PASSWORD = "correct horse battery staple";

function accepted<Op extends LabOp>(ack: LabAnswer<Op>): LabReply<Op> {
  assert.ok(ack.ok, ack.ok ? "" : ack.error);
  return ack;
}

describe("a workshop's participants in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let admin: TestClient;
  let facilitator: TestClient;
  let workshop: WorkshopView;
  const contexts: BrowserContext[] = [];

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser({ signedIn: false });
    admin = await connectClient(server.url);
    accepted(await admin.sendLab({ op: "create-user", name: "Fay", email: "fay@example.com", password: PASSWORD, role: "facilitator" }));
    facilitator = await connectClient(server.url, await signIn(server.url, "fay@example.com", PASSWORD));
    const made = accepted(await facilitator.sendLab({ op: "create-workshop", title: "Led DataParallel", scenarioIds: ["dp-basics"], capacity: 1, pace: "led" }));
    assert.ok(made.workshop);
    workshop = made.workshop;
  });

  after(async () => {
    facilitator?.close();
    admin?.close();
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
  });

  /** A participant joins by the workshop's link with their name and lands on the notebook list. */
  async function join(name: string): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/join/${workshop.joinCode}`);
    await page.getByTestId("join-name").fill(name);
    await page.getByTestId("join-submit").click();
    await page.waitForURL((url) => url.pathname === "/");
    return page;
  }

  async function update(changes: Record<string, unknown>): Promise<void> {
    accepted(await facilitator.sendLab({ op: "update-workshop", workshopId: workshop.id, ...changes }));
  }

  /** The parameter input of one field in one templated cell's form. */
  function formInput(page: Page, templateId: string, name: string) {
    return page.locator(`[data-testid="parameter-form"][data-template-id="${templateId}"] [data-testid="parameter-field"][data-name="${name}"] [data-testid="parameter-input"]`);
  }

  it("admits the first, queues the second until there is room, then shows the led notebook step by step with the facilitator's preset", LIMIT, async () => {
    const first = await join("Ada");
    await first.getByTestId("workshop-admitted").waitFor();
    await first.getByTestId("notebook-row").first().waitFor();
    assert.equal(await first.getByTestId("workshop-title").textContent(), "Led DataParallel");

    const second = await join("Bo");
    const waiting = second.getByTestId("workshop-waiting");
    await waiting.waitFor();
    assert.equal(await waiting.getAttribute("data-position"), "1");
    assert.match((await waiting.textContent()) ?? "", /number 1 in the queue for Led DataParallel/);
    await second.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    assert.equal(await second.getByTestId("notebook-row").count(), 0, "no notebook while waiting");

    // Room for two: the second's page turns into their notebooks by itself.
    await second.evaluate(() => {
      (window as unknown as { stayedOpen: boolean }).stayedOpen = true;
    });
    await update({ capacity: 2 });
    await second.getByTestId("workshop-admitted").waitFor();
    await second.getByTestId("notebook-row").first().waitFor();
    assert.equal(await second.getByTestId("workshop-waiting").count(), 0);
    assert.equal(await second.evaluate(() => (window as unknown as { stayedOpen?: boolean }).stayedOpen), true, "the same page, not reloaded");

    // The led notebook: step 1's cells (its explanations and the split experiment), then the placeholder.
    await first.getByTestId("notebook-link").first().click();
    await first.waitForURL(/\/notebooks\//);
    await first.getByTestId("step-hidden").waitFor();
    await formInput(first, "dp-basics/split", "batch_size").waitFor();
    assert.equal(await first.getByTestId("cell").count(), 3);
    assert.equal(await first.locator('[data-testid="parameter-form"][data-template-id="dp-basics/equivalence"]').count(), 0);
    // It says what comes next, and that more follow.
    assert.match((await first.getByTestId("step-hidden").textContent()) ?? "", /^Next: step 2 of \d+, Equivalence\. It appears here when your facilitator reveals it \(then \d+ more\)\.$/);

    // A broadcast with a preset: shown on the notebook page, applied to the form on a click.
    accepted(await facilitator.sendLab({ op: "workshop-broadcast", workshopId: workshop.id, message: "Try a batch that does not split evenly", preset: { scenarioId: "dp-basics", values: { batch_size: 62 } } }));
    const shown = first.getByTestId("workshop-broadcast").filter({ hasText: "Try a batch that does not split evenly" });
    await shown.waitFor();
    assert.match((await shown.getByTestId("broadcast-preset").textContent()) ?? "", /batch_size = 62/);
    assert.equal(await formInput(first, "dp-basics/split", "batch_size").inputValue(), "64");
    await shown.getByTestId("apply-preset").click();
    await first.waitForFunction((el) => (el as HTMLInputElement | null)?.value === "62", await formInput(first, "dp-basics/split", "batch_size").elementHandle());
    await shown.waitFor({ state: "detached" });

    // Step 2 revealed: its explanation, question and experiment appear; later steps stay folded.
    await update({ revealedSteps: 2 });
    await formInput(first, "dp-basics/equivalence", "batch_size").waitFor();
    assert.equal(await first.getByTestId("cell").count(), 6);
    assert.equal(await first.getByTestId("step-hidden").count(), 1);
    assert.equal(await formInput(first, "dp-basics/equivalence", "batch_size").inputValue(), "62", "the preset applied to every attached cell of the scenario");

    // The end: the banner says so, and every step can be read.
    await update({ end: true });
    await first.getByTestId("workshop-ended").waitFor();
    await first.getByTestId("step-hidden").waitFor({ state: "detached" });
    assert.match((await first.getByTestId("workshop-ended").textContent()) ?? "", /export them as \.ipynb/);
    // The open page turns read-only with it (the server refuses edits and runs from now on).
    assert.equal(await first.getByTestId("read-only").textContent(), "Read only — the workshop has ended");
  });
});
