/**
 * Accounts in Debian's chromium against the real server: two members sign
 * in on the login page in separate browser contexts and neither sees the
 * other's notebooks (not in the list, not by URL); a notebook shared for
 * reading opens read-only for the other; an admin removes one member in the
 * users page and that member's open tab is told at once and disconnected.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { newNotebookFromList } from "../helpers/new-notebook";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";

describe("accounts in the browser", () => {
  let server: LabServer;
  let browser: Browser;
  let admin: TestClient;
  const contexts: BrowserContext[] = [];

  before(async () => {
    server = await LabServer.start();
    browser = await launchBrowser({ signedIn: false });
    admin = await connectClient(server.url);
    for (const name of ["Ada", "Bo"]) {
      const created = await admin.sendLab({ op: "create-user", name, email: `${name.toLowerCase()}@example.com`, password: PASSWORD, role: "member" });
      assert.ok(created.ok, created.ok ? "" : created.error);
    }
  });

  after(async () => {
    admin?.close();
    for (const context of contexts) await context.close();
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(email: string, next = "/"): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    // An unsigned visit goes to the sign-in page and comes back after it.
    await page.goto(`${server.url}${next}`);
    await page.waitForURL(/\/login\?next=/);
    await page.getByTestId("login-email").fill(email);
    await page.getByTestId("login-password").fill(PASSWORD);
    await page.getByTestId("login-submit").click();
    await page.waitForURL((url) => url.pathname === next);
    return page;
  }

  async function createNotebook(page: Page, title: string): Promise<string> {
    await newNotebookFromList(page, title);
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    await page.goto(`${server.url}/`);
    return id;
  }

  it("two members each see only their own notebooks, by list and by URL; a wrong password says so", LIMIT, async () => {
    const ada = await signedIn("ada@example.com");
    const bo = await signedIn("bo@example.com");
    const adasId = await createNotebook(ada, "Ada's private experiment");
    await createNotebook(bo, "Bo's private experiment");
    await ada.getByTestId("notebook-row").first().waitFor();
    await bo.getByTestId("notebook-row").first().waitFor();
    assert.deepEqual(await ada.getByTestId("notebook-link").allTextContents(), ["Ada's private experiment"]);
    assert.deepEqual(await bo.getByTestId("notebook-link").allTextContents(), ["Bo's private experiment"]);
    // Bo guessing Ada's notebook's address gets the same page as an id that does not exist.
    await bo.goto(`${server.url}/notebooks/${adasId}`);
    await bo.getByTestId("notebook-not-found").waitFor();
    assert.equal(await bo.getByText("Ada's private experiment").count(), 0);

    const stranger = await (await browser.newContext()).newPage();
    await stranger.goto(`${server.url}/login`);
    await stranger.getByTestId("login-email").fill("ada@example.com");
    await stranger.getByTestId("login-password").fill("not the password");
    await stranger.getByTestId("login-submit").click();
    await stranger.getByTestId("login-error").waitFor();
    await stranger.context().close();
  });

  it("a notebook shared for reading opens read-only for the other member", LIMIT, async () => {
    const ada = await signedIn("ada@example.com");
    const id = await createNotebook(ada, "Shared for reading");
    await ada.goto(`${server.url}/notebooks/${id}`);
    await ada.getByTestId("share-button").click();
    await ada.getByTestId("share-email").fill("bo@example.com");
    await ada.getByTestId("share-access").selectOption("read");
    await ada.getByTestId("share-submit").click();
    await ada.locator('[data-testid="share-row"][data-email="bo@example.com"]').waitFor();

    const bo = await signedIn("bo@example.com");
    await bo.getByTestId("shared-notebooks").getByText("Shared for reading").waitFor();
    await bo.goto(`${server.url}/notebooks/${id}`);
    await bo.getByTestId("read-only").waitFor();
  });

  it("an admin removes a member and that member's open tab is disconnected at once", LIMIT, async () => {
    const bo = await signedIn("bo@example.com");
    await bo.getByTestId("notebook-row").first().waitFor();
    const adminPage = await browser.newContext().then(async (context) => {
      contexts.push(context);
      await context.addCookies([{ name: server.cookie!.split("=")[0]!, value: server.cookie!.slice(server.cookie!.indexOf("=") + 1), url: server.url }]);
      return context.newPage();
    });
    await adminPage.goto(`${server.url}/admin/users`);
    const row = adminPage.locator('[data-testid="user-row"][data-email="bo@example.com"]');
    await row.getByTestId("user-remove").click();
    await row.getByTestId("user-remove-confirm").click();
    await bo.getByTestId("session-ended").waitFor();
    assert.equal(await bo.getByTestId("session-ended").getAttribute("data-reason"), "removed");
    await row.waitFor({ state: "detached" });
    // And the tab's cookie opens nothing any more.
    await bo.goto(`${server.url}/`);
    await bo.waitForURL(/\/login/);
  });

  it("changing one's password at /account signs out one's other browser, and keeps this one in", LIMIT, async () => {
    const here = await signedIn("ada@example.com");
    const elsewhere = await signedIn("ada@example.com");
    await elsewhere.getByTestId("notebook-row").first().waitFor();
    await here.getByTestId("user-menu-account").click();
    await here.waitForURL(/\/account$/);
    await here.getByTestId("password-current").fill(PASSWORD);
    await here.getByTestId("password-new").fill("a brand new horse battery");
    // The page reloads into its new session once the server ends the old one:
    // wait for that reload, or the navigation below races it (CI met this).
    const reloaded = here.waitForEvent("load");
    await here.getByTestId("password-submit").click();
    await elsewhere.getByTestId("session-ended").waitFor();
    assert.equal(await elsewhere.getByTestId("session-ended").getAttribute("data-reason"), "revoked");
    await reloaded;
    assert.equal(new URL(here.url()).pathname, "/account");
    // This browser holds the new session: the list still opens without signing in.
    await here.goto(`${server.url}/`);
    await here.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    assert.equal(new URL(here.url()).pathname, "/");
    await elsewhere.goto(`${server.url}/`);
    await elsewhere.waitForURL(/\/login/);
  });
});
