/** The notebook list's "New notebook": it opens "Untitled" at once; a title, if the test wants one, is given in place. */
import type { Page } from "playwright-core";

export async function newNotebookFromList(page: Page, title?: string): Promise<void> {
  await page.getByTestId("new-notebook").click();
  await page.waitForURL(/\/notebooks\/[A-Za-z0-9_-]+$/);
  if (title !== undefined) await renameInPlace(page, title);
}

/** Clicks the notebook page's title, types `title` and waits until the server's rename shows. */
export async function renameInPlace(page: Page, title: string): Promise<void> {
  await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
  await page.getByTestId("notebook-title").click();
  const input = page.getByTestId("notebook-title-input");
  await input.fill(title);
  await input.press("Enter");
  await page.waitForFunction(
    (want) => {
      const el = document.querySelector('[data-testid="notebook-title"]');
      return el?.textContent === want && el.getAttribute("data-saving") === "false";
    },
    title,
  );
}
