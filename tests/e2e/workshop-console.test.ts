/**
 * The facilitator console in Debian's chromium against the real server: a
 * facilitator signs in, makes a workshop on its page and opens its console;
 * two participants join through the join link in their own browsers, predict
 * differently on their "DataParallel basics" copy and run it to its
 * verdicts; the console shows both on the roster with their verdicts and the
 * class's predictions beside what the runs measured, live. The facilitator
 * restarts one participant's kernel from the console and that participant's
 * notebook shows the restart; a participant who drops and comes back through
 * the join link is the same roster row. Every wait is on a selector or an
 * event, never a sleep.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 170_000 };
const PASSWORD = "correct horse battery staple";
const QUESTION = "dp-basics/split";
/** A kernel start and a whole scenario run on a busy two-core machine. */
const RUN_WAIT = { timeout: 120_000 };

describe("the facilitator console in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let admin: TestClient;
  const contexts: BrowserContext[] = [];

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser({ signedIn: false });
    admin = await connectClient(server.url);
    const created = await admin.sendLab({ op: "create-user", name: "Fay", email: "fay@example.com", password: PASSWORD, role: "facilitator" });
    assert.ok(created.ok, created.ok ? "" : created.error);
  });

  after(async () => {
    admin?.close();
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
  });

  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    contexts.push(context);
    return context;
  }

  /** A participant joins through the link by typing their name; their browser then holds the session. */
  async function join(context: BrowserContext, link: string, name: string): Promise<Page> {
    const page = await context.newPage();
    await page.goto(link);
    await page.getByTestId("join-name").fill(name);
    await page.getByTestId("join-submit").click();
    await page.waitForURL((url) => !url.pathname.startsWith("/join/"));
    return page;
  }

  const cellOf = (page: Page, templateId: string): Locator => page.getByTestId("cell").filter({ has: page.locator(`[data-template-id="${templateId}"]`) });

  async function predict(page: Page, choice: string): Promise<void> {
    const prompt = cellOf(page, QUESTION).getByTestId("prediction-prompt");
    await prompt.locator(`[data-testid="prediction-choice"][value="${choice}"]`).check();
    await prompt.getByTestId("prediction-commit").click();
    await cellOf(page, QUESTION).getByTestId("prediction-committed").waitFor();
  }

  /** The first experiment cell by hand, then the verdicts cell (which runs the others first, visibly). */
  async function runToVerdicts(page: Page): Promise<void> {
    const split = cellOf(page, "dp-basics/split");
    await split.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    const splitId = await split.getAttribute("data-cell-id");
    await page.locator(`[data-testid="cell"][data-cell-id="${splitId}"][data-run-state="idle"] [data-testid="cell-status"]`).waitFor(RUN_WAIT);
    const verdicts = cellOf(page, "dp-basics/verdicts");
    await verdicts.getByTestId("cell-prompt").click();
    await page.getByTestId("toolbar-run").click();
    await verdicts.getByTestId("verdict-report").waitFor(RUN_WAIT);
  }

  it("shows two participants live: roster, predictions beside measurements, verdicts; restarts a kernel; a dropped participant comes back as the same row", LIMIT, async () => {
    // The facilitator signs in on the login page and makes the workshop on the workshops page.
    const fay = await (await newContext()).newPage();
    const cspViolations = await watchCspViolations(fay);
    await fay.goto(`${server.url}/workshops`);
    await fay.waitForURL(/\/login\?next=/);
    await fay.getByTestId("login-email").fill("fay@example.com");
    await fay.getByTestId("login-password").fill(PASSWORD);
    await fay.getByTestId("login-submit").click();
    await fay.waitForURL((url) => url.pathname === "/workshops");
    await fay.getByTestId("new-workshop-title").fill("Tuesday lab");
    await fay.locator('[data-testid="new-workshop-scenario"][data-scenario-id="dp-basics"]').check();
    assert.equal(await fay.getByTestId("new-workshop-capacity").inputValue(), "60");
    assert.equal(await fay.getByTestId("new-workshop-gpus").inputValue(), "0");
    await fay.getByTestId("new-workshop-submit").click();
    const card = fay.getByTestId("workshop-row").filter({ hasText: "Tuesday lab" });
    await card.getByTestId("workshop-console-link").click();
    await fay.waitForURL(/\/workshops\/[A-Za-z0-9_-]+$/);
    const workshopId = decodeURIComponent(new URL(fay.url()).pathname.split("/").pop()!);
    await fay.locator('[data-testid="workshop-console"][data-status="ready"]').waitFor();
    assert.equal(await fay.getByTestId("console-state").getAttribute("data-state"), "open");
    assert.match((await fay.getByTestId("console-resources").textContent()) ?? "", /CPU emulation/);
    assert.equal(await fay.getByTestId("console-summary").getAttribute("href"), `/api/workshops/${workshopId}/summary.csv`);
    await fay.getByTestId("roster-empty").waitFor();
    const link = (await fay.getByTestId("console-join-link").getAttribute("href"))!;
    assert.match(link, /\/join\/[A-Z0-9]+$/);

    // Two participants join in their own browsers; the roster grows live.
    const adaContext = await newContext();
    const boContext = await newContext();
    const [adaHome, boHome] = await Promise.all([join(adaContext, link, "Ada"), join(boContext, link, "Bo")]);
    const rows = fay.getByTestId("roster-row");
    const rowOf = (name: string): Locator => rows.filter({ has: fay.locator(`[data-testid="roster-name"]`, { hasText: new RegExp(`^${name}$`) }) });
    await rowOf("Ada").getByTestId("roster-peek").waitFor();
    await rowOf("Bo").getByTestId("roster-peek").waitFor();
    assert.equal(await rows.count(), 2);
    const boId = (await rowOf("Bo").getAttribute("data-participant-id"))!;
    // Peek opens the participant's own copy in a new tab, read-only for the facilitator.
    const adaPeek = (await rowOf("Ada").getByTestId("roster-peek").getAttribute("href"))!;
    const boPeek = (await rowOf("Bo").getByTestId("roster-peek").getAttribute("href"))!;
    assert.match(adaPeek, /^\/notebooks\/[A-Za-z0-9_-]+\?peek=1$/);
    assert.notEqual(adaPeek, boPeek);
    assert.equal(await rowOf("Ada").getByTestId("roster-peek").getAttribute("target"), "_blank");
    const peekPage = await fay.context().newPage();
    await peekPage.goto(`${server.url}${adaPeek}`);
    assert.match((await peekPage.getByTestId("read-only").textContent()) ?? "", /^Peek — read only/);
    await peekPage.locator(`[data-testid="notebook-view"], [data-testid="cell"]`).first().waitFor();
    assert.equal(await peekPage.getByTestId("toolbar-run").count(), 0, "no run buttons in a peek");
    await peekPage.close();
    // The participants open their copies at the same address, without the peek.
    const [adaHref, boHref] = [adaPeek, boPeek].map((href) => href.replace(/\?peek=1$/, ""));

    // Each opens their copy and predicts differently on its first question.
    await Promise.all([adaHome.goto(`${server.url}${adaHref}`), boHome.goto(`${server.url}${boHref}`)]);
    const ada = adaHome;
    const bo = boHome;
    await cellOf(ada, QUESTION).getByTestId("prediction-prompt").waitFor();
    const choices = await cellOf(ada, QUESTION).getByTestId("prediction-choice").evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    assert.ok(choices.length >= 2, `the question has choices: ${choices.join(" | ")}`);
    const [first, second] = choices as [string, string];
    await Promise.all([predict(ada, first), predict(bo, second)]);
    const tally = fay.locator(`[data-testid="tally"][data-question-id="${QUESTION}"]`);
    await tally.locator(`[data-testid="tally-predicted"][data-choice="${first}"][data-count="1"]`).waitFor();
    await tally.locator(`[data-testid="tally-predicted"][data-choice="${second}"][data-count="1"]`).waitFor();
    assert.equal(await rowOf("Ada").getByTestId("roster-predictions").getAttribute("data-count"), "1");

    // Both run their copy to its verdicts; the console shows each one's verdicts and what the runs measured.
    await Promise.all([runToVerdicts(ada), runToVerdicts(bo)]);
    await rowOf("Ada").getByTestId("roster-verdict").first().waitFor();
    await rowOf("Bo").getByTestId("roster-verdict").first().waitFor();
    // 64 rows on 4 devices split evenly (the scenario's defaults): both runs measured the first choice.
    await tally.locator(`[data-testid="tally-measured"][data-choice="${first}"][data-count="2"]`).waitFor();
    assert.equal(await tally.locator(`[data-testid="tally-measured"][data-choice="${second}"]`).getAttribute("data-count"), "0");
    assert.equal(await tally.getByTestId("tally-undecided").getAttribute("data-count"), "0");
    await fay.locator('[data-testid="roster-row"][data-kernel="idle"]').nth(1).waitFor();
    assert.match((await rowOf("Ada").getByTestId("roster-step").textContent()) ?? "", /^step \d+ of \d+: \w/);

    // The facilitator restarts Ada's kernel; Ada's notebook shows it restarting, then idle again.
    await ada.locator('[data-testid="kernel-status"][data-state="idle"]').waitFor();
    await ada.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { kernelStates: string[] }).kernelStates = seen;
      new MutationObserver(() => {
        const state = document.querySelector('[data-testid="kernel-status"]')?.getAttribute("data-state");
        if (state && seen.at(-1) !== state) seen.push(state);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
    });
    await rowOf("Ada").getByTestId("restart-kernel").click();
    await ada.waitForFunction(() => (window as unknown as { kernelStates: string[] }).kernelStates.some((state) => state === "restarting" || state === "starting"), undefined, RUN_WAIT);
    await ada.locator('[data-testid="kernel-status"][data-state="idle"]').waitFor(RUN_WAIT);
    await fay.locator(`[data-testid="roster-row"][data-participant-id="${(await rowOf("Ada").getAttribute("data-participant-id"))!}"][data-kernel="idle"]`).waitFor(RUN_WAIT);

    // Bo drops (the tab closes) and comes back through the join link: the same participant, still two rows.
    await bo.close();
    await fay.locator(`[data-testid="roster-row"][data-participant-id="${boId}"][data-online="false"]`).waitFor();
    const back = await join(boContext, link, "Bo");
    await fay.locator(`[data-testid="roster-row"][data-participant-id="${boId}"][data-online="true"]`).waitFor();
    assert.equal(await rows.count(), 2);
    assert.equal(await fay.locator(`[data-testid="roster-row"][data-participant-id="${boId}"] [data-testid="roster-predictions"]`).getAttribute("data-count"), "1", "Bo's prediction is still Bo's");
    await back.close();

    // Someone else's (or no) workshop reads as not found; the console loaded whole under the page's policy.
    const stray = await fay.context().newPage();
    await stray.goto(`${server.url}/workshops/no-such-workshop`);
    await stray.getByTestId("console-not-found").waitFor();
    await stray.close();
    assert.deepEqual(await cspViolations(), []);
  });
});
