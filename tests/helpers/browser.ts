/** Debian's chromium driven by playwright-core (npm's browser download cannot work here). */
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchBrowser(): Promise<Browser> {
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
