/**
 * A class, as a facilitator trusts it with one: a facilitator and three
 * participants in their own browsers (Debian's chromium), against the real
 * server at its defaults on this machine (the kernel cap sized from the
 * machine, no setting changed). The facilitator signs in and lands on their
 * workshops, makes a led workshop of two scenarios and is told whether the
 * lab holds it; the join page names the workshop (and a wrong code says so
 * before anyone types); every participant gets a kernel; each one's page has
 * a participant's controls only and never names a setting; the roster puts
 * each on the copy they opened; all three run step 1 at once and each sees
 * its first output within a second of pressing Run, while the cell still
 * runs; and as step 1 ends — before any verdicts cell runs — each sees
 * "you predicted X, measured Y", and the console's measured counts and the
 * CSV's measured column fill in. Every wait is on a selector or an event.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { launchBrowser, watchCspViolations } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { pollUntil } from "../helpers/daemons";

const LIMIT = { timeout: 300_000 };
const PASSWORD = "correct horse battery staple";
const SPLIT = "dp-basics/split";
/** Kernels starting (and importing torch) for three participants on a busy two-core machine. */
const KERNEL_WAIT = { timeout: 150_000 };
/** A setting's name, as an operator would write it: a participant must never read one. */
const SETTING_NAME = /MGPULAB_[A-Z_]+|MAX_KERNELS/;
const NAMES = ["Ada", "Bo", "Cy"] as const;

describe("a class of three with its facilitator, at the lab's defaults", () => {
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

  async function newPage(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    return context.newPage();
  }

  const cellOf = (page: Page, templateId: string): Locator => page.getByTestId("cell").filter({ has: page.locator(`[data-template-id="${templateId}"]`) });

  /** What the participant's page says, for the check that it names no setting. */
  const pageText = (page: Page): Promise<string> => page.evaluate(() => document.body.innerText);

  it("gives every participant a kernel, streams step 1 live for all three, and fills in the console and the CSV as it ends", LIMIT, async () => {
    // The facilitator signs in from the login page and lands on their workshops.
    const fay = await newPage();
    const cspViolations = await watchCspViolations(fay);
    await fay.goto(`${server.url}/login`);
    await fay.getByTestId("login-email").fill("fay@example.com");
    await fay.getByTestId("login-password").fill(PASSWORD);
    await fay.getByTestId("login-submit").click();
    await fay.waitForURL((url) => url.pathname === "/workshops");

    // A led workshop of two scenarios, capacity and resources left at their defaults.
    await fay.getByTestId("new-workshop-title").fill("Thursday class");
    await fay.locator('[data-testid="new-workshop-scenario"][data-scenario-id="dp-basics"]').check();
    await fay.locator('[data-testid="new-workshop-scenario"][data-scenario-id="params-not-updated"]').check();
    await fay.getByTestId("new-workshop-pace").selectOption("led");
    await fay.getByTestId("new-workshop-submit").click();
    const card = fay.getByTestId("workshop-row").filter({ hasText: "Thursday class" });
    await card.waitFor();
    // Before the class arrives, the facilitator is told whether the lab holds it: the defaults hold 60 here.
    assert.notEqual(await card.getByTestId("workshop-sizing").getAttribute("data-verdict"), "does-not-fit", (await card.getByTestId("workshop-sizing").textContent()) ?? "");
    assert.match((await card.getByTestId("workshop-pace").textContent()) ?? "", /^Led by you.*0 of 60 places taken/);
    assert.match((await card.getByTestId("workshop-status").textContent()) ?? "", /^open/);
    await card.getByTestId("workshop-console-link").click();
    await fay.locator('[data-testid="workshop-console"][data-status="ready"]').waitFor();
    const link = (await fay.getByTestId("console-join-link").getAttribute("href"))!;

    // A wrong code says so before anyone types a name.
    const stray = await newPage();
    await stray.goto(`${server.url}/join/WRONGCODE`);
    await stray.getByTestId("join-unknown").filter({ hasText: /^No open workshop has this code; check it with your facilitator\.$/ }).waitFor();
    await stray.close();

    // Three participants join by the link, each in their own browser; the join page names the workshop.
    const pages = await Promise.all(
      NAMES.map(async (name) => {
        const page = await newPage();
        await page.goto(link);
        await page.getByTestId("join-workshop").filter({ hasText: /^You are joining Thursday class\.$/ }).waitFor();
        await page.getByTestId("join-name").fill(name);
        await page.getByTestId("join-submit").click();
        await page.waitForURL((url) => url.pathname === "/");
        return page;
      }),
    );

    // Every one of them gets a kernel (started ahead: the lab's cap at its default holds the class).
    const rows = fay.getByTestId("roster-row");
    const rowOf = (name: string): Locator => rows.filter({ has: fay.locator('[data-testid="roster-name"]', { hasText: new RegExp(`^${name}$`) }) });
    for (const name of NAMES) await fay.locator(`[data-testid="roster-row"][data-kernel="idle"]`).filter({ hasText: name }).waitFor(KERNEL_WAIT);
    // Kernels started ahead import torch in the background as they start (the lab logs when each is done): a
    // class arriving minutes later finds them ready, as here once the logs say so.
    await pollUntil("every participant's kernel preloaded torch", () => server.logs.filter((line) => line.includes("preloaded torch")).length >= NAMES.length || null, KERNEL_WAIT.timeout, 250);

    // Their list: their copies, no lab-wide kernel list, no deleting, no extra copies from the scenario list.
    for (const page of pages) {
      await page.getByTestId("workshop-admitted").waitFor();
      await page.getByTestId("notebook-row").nth(1).waitFor();
      assert.equal(await page.getByTestId("running-kernels-link").count(), 0);
      assert.equal(await page.getByTestId("notebook-delete").count(), 0);
      assert.equal(await page.getByTestId("scenario-picker").count(), 0);
      assert.doesNotMatch(await pageText(page), SETTING_NAME);
    }

    // Each opens DataParallel basics; the roster puts them on that copy (not the copy made last), before they run it.
    const notebooks = await Promise.all(
      pages.map(async (page) => {
        await page.getByTestId("notebook-link").filter({ hasText: /^DataParallel basics/ }).click();
        await page.waitForURL(/\/notebooks\//);
        await cellOf(page, SPLIT).getByTestId("prediction-prompt").waitFor();
        return page;
      }),
    );
    for (const name of NAMES) {
      await rowOf(name).getByTestId("roster-notebook").filter({ hasText: /^DataParallel basics/ }).waitFor();
      await rowOf(name).getByTestId("roster-step").filter({ hasText: /^step 1 of \d+: Split \(not run yet\)$/ }).waitFor();
    }

    // A participant's page has a participant's controls; led pace says what comes next; no setting is named.
    for (const page of notebooks) {
      assert.equal(await page.getByTestId("share-button").count(), 0, "no Share");
      assert.equal(await page.getByTestId("running-kernels-link").count(), 0);
      assert.equal(await page.getByTestId("template-detach").count(), 0, "no Detach");
      assert.equal(await page.getByTestId("template-detach-text").count(), 0, "no 'Detach to edit'");
      assert.match((await page.getByTestId("step-hidden").textContent()) ?? "", /^Next: step 2 of \d+, Equivalence\./);
      assert.doesNotMatch(await pageText(page), SETTING_NAME);
    }

    // Each asks for the largest model and the most timed forwards, so that step 1 keeps running for seconds after
    // its first line: at the defaults it ends about 200 ms after it, which a busy machine (a slow commit, a page
    // whose main thread is taken) can swallow, and the first output then shows together with the end.
    const longer = { batch_size: "512", timing_repeats: "50", hidden: "384", d_in: "256" };
    await Promise.all(
      notebooks.map(async (page) => {
        for (const [name, value] of Object.entries(longer)) {
          const input = cellOf(page, SPLIT).locator(`[data-testid="parameter-field"][data-name="${name}"] [data-testid="parameter-input"]`);
          await input.fill(value);
          await input.press("Enter");
          await cellOf(page, SPLIT).locator(".view-lines").filter({ hasText: value }).waitFor();
        }
      }),
    );

    // Each predicts, differently.
    const choices = await cellOf(notebooks[0]!, SPLIT).getByTestId("prediction-choice").evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    await Promise.all(
      notebooks.map(async (page, i) => {
        const prompt = cellOf(page, SPLIT).getByTestId("prediction-prompt");
        await prompt.locator(`[data-testid="prediction-choice"][value="${choices[i % choices.length]!}"]`).check();
        await prompt.getByTestId("prediction-commit").click();
        await cellOf(page, SPLIT).getByTestId("prediction-committed").waitFor();
      }),
    );

    // All three press Run on step 1 together. Each page notes when Run was pressed, when the first output showed,
    // and whether the cell was still running then: streamed, not all at the end.
    const firstOutput = await Promise.all(
      notebooks.map(async (page) => {
        const split = cellOf(page, SPLIT);
        const cellId = (await split.getAttribute("data-cell-id"))!;
        await split.getByTestId("cell-prompt").click();
        // (No named functions in here: the test's compiler would wrap them in a helper the page does not have.)
        await page.evaluate((id) => {
          const seen = { pressedAt: 0, firstOutputAt: 0, runningThen: false, endedAt: 0 };
          (window as unknown as { firstOutput: typeof seen }).firstOutput = seen;
          const selector = `[data-testid="cell"][data-cell-id="${CSS.escape(id)}"]`;
          new MutationObserver(() => {
            if (seen.firstOutputAt !== 0 && seen.endedAt === 0 && document.querySelector(selector)?.getAttribute("data-run-state") !== "running") seen.endedAt = performance.now();
            if (seen.firstOutputAt !== 0 || seen.pressedAt === 0) return;
            const text = document.querySelector(selector)?.querySelector('[data-testid="output-stream"]')?.textContent ?? "";
            if (text.trim() === "") return;
            seen.firstOutputAt = performance.now();
            seen.runningThen = document.querySelector(selector)?.getAttribute("data-run-state") === "running";
          }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
          document.querySelector('[data-testid="toolbar-run"]')?.addEventListener("click", () => (seen.pressedAt = performance.now()), { once: true, capture: true });
        }, cellId);
        await page.getByTestId("toolbar-run").click();
        await page.waitForFunction(() => (window as unknown as { firstOutput: { firstOutputAt: number } }).firstOutput.firstOutputAt > 0, undefined, KERNEL_WAIT);
        return page.evaluate(() => (window as unknown as { firstOutput: { pressedAt: number; firstOutputAt: number; runningThen: boolean } }).firstOutput);
      }),
    );
    const waits = firstOutput.map((seen) => Math.round(seen.firstOutputAt - seen.pressedAt));
    console.log(`first output of step 1 after Run, per participant (ms): ${waits.join(", ")}`);
    await Promise.all(notebooks.map((page) => page.waitForFunction(() => (window as unknown as { firstOutput: { endedAt: number } }).firstOutput.endedAt > 0, undefined, KERNEL_WAIT)));
    const ends = await Promise.all(notebooks.map((page) => page.evaluate(() => (window as unknown as { firstOutput: { pressedAt: number; endedAt: number } }).firstOutput)));
    console.log(`step 1 ended after Run, per participant (ms): ${ends.map((seen) => Math.round(seen.endedAt - seen.pressedAt)).join(", ")}`);
    for (const [i, seen] of firstOutput.entries()) {
      assert.ok(seen.runningThen, `${NAMES[i]}: the first output arrived while the cell still ran`);
      assert.ok(seen.firstOutputAt - seen.pressedAt <= 1000, `${NAMES[i]}: first output ${waits[i]} ms after Run (bar: 1 s)`);
    }

    // As step 1 ends each sees what their run measured beside their prediction, under the cell: no verdicts cell ran.
    for (const page of notebooks) {
      const report = cellOf(page, SPLIT).locator('[data-testid="verdict-report"][data-scope="step"]');
      await report.waitFor(KERNEL_WAIT);
      await report.getByTestId("prediction-judgement").first().waitFor();
      assert.equal(await cellOf(page, "dp-basics/verdicts").getByTestId("verdict-report").count(), 0);
    }
    // The console's measured counts fill in for the question, and each roster row says step 1 ran.
    const tally = fay.locator(`[data-testid="tally"][data-question-id="${SPLIT}"]`);
    await fay.waitForFunction(
      (question) => {
        const counts = [...document.querySelectorAll(`[data-testid="tally"][data-question-id="${question}"] [data-testid="tally-measured"]`)].map((el) => Number(el.getAttribute("data-count")));
        return counts.reduce((a, b) => a + b, 0) === 3;
      },
      SPLIT,
      KERNEL_WAIT,
    );
    assert.ok(await tally.count());
    for (const name of NAMES) await rowOf(name).getByTestId("roster-step").filter({ hasText: /^step 1 of \d+: Split \(ran\)$/ }).waitFor();

    // The CSV's measured column is filled for each of them.
    const csv = await (await fay.request.get(`${server.url}${(await fay.getByTestId("console-summary").getAttribute("href"))!}`)).text();
    const lines = csv.trimEnd().split("\r\n");
    const header = lines[0]!.split(",");
    const measured = header.indexOf("measured");
    for (const name of NAMES) {
      const row = lines.find((line) => line.includes(`,${SPLIT},`) && line.includes(`,${name},`));
      assert.ok(row, `a CSV row for ${name}: ${csv}`);
      const cells = row.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((cell) => cell.replace(/,$/, ""));
      assert.notEqual(cells[measured], "", `${name}'s measured column: ${row}`);
    }

    // Nothing on a participant's page names a setting, after the run either.
    for (const page of notebooks) assert.doesNotMatch(await pageText(page), SETTING_NAME);
    assert.deepEqual(await cspViolations(), []);
  });
});
