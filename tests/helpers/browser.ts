/** Debian's chromium driven by playwright-core (npm's browser download cannot work here). */
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { rememberedSessions } from "./lab-session";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * The browser; its new pages and contexts open signed in to every test lab
 * of this process as that lab's local admin (lab-session.ts), unless
 * `signedIn` is false.
 */
export async function launchBrowser({ signedIn = true }: { signedIn?: boolean } = {}): Promise<Browser> {
  const browser = await launchChromium();
  if (signedIn) {
    const newContext = browser.newContext.bind(browser);
    browser.newContext = async (options?: BrowserContextOptions) => {
      const context = await newContext(options);
      await context.addCookies(rememberedSessions().map(({ url, cookie }) => cookieFor(url, cookie)));
      return context;
    };
    browser.newPage = async (options?: BrowserContextOptions) => {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      // The context goes with its page (as playwright's own newPage does); after the browser closed, there is nothing left to close.
      page.once("close", () => void context.close().catch(() => undefined));
      return page;
    };
  }
  return browser;
}

/** A `name=value` session cookie as a browser cookie for the lab at `url`. */
export function cookieFor(url: string, cookie: string): { name: string; value: string; url: string } {
  const at = cookie.indexOf("=");
  return { name: cookie.slice(0, at), value: cookie.slice(at + 1), url };
}

function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * Collects every Content-Security-Policy violation the page reports, across
 * navigations and reloads (the `securitypolicyviolation` event of each
 * document, from its first script on, plus the console's CSP and worker
 * errors), so a test can assert the lab's pages load whole under their policy.
 */
export async function watchCspViolations(page: Page): Promise<() => Promise<string[]>> {
  const seen: string[] = [];
  await page.exposeBinding("__mgpulabReportCsp", (_source, report: string) => {
    seen.push(report);
  });
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { __mgpulabReportCsp: (report: string) => void }).__mgpulabReportCsp;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || "inline"} (${event.sourceFile}:${event.lineNumber})`);
    });
  });
  page.on("console", (message) => {
    if (/Content Security Policy|Could not create web worker/i.test(message.text())) seen.push(message.text());
  });
  // Reports travel from the page asynchronously; one round trip lets those already sent arrive.
  return async () => {
    await page.evaluate(() => undefined).catch(() => undefined);
    return [...seen];
  };
}
