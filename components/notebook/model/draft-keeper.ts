/**
 * The typed text the server has not confirmed, kept in the browser
 * (localStorage) so a closed tab, a crash or an outage loses nothing: read
 * once when the page opens, written shortly after each change and at once on
 * page hide or disconnect. Several tabs share one draft per notebook: each
 * writes only the cells it touched. Separate from the saving itself: this is
 * only where the text waits.
 */
import { draftKey, mergeDraft, parseDraft, serializeDraft, type PendingEdits } from "./pending-edits";

/** The part of `localStorage` used for drafts. */
export interface DraftStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const WRITE_DELAY_MS = 200;

export class DraftKeeper {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly notebookId: string,
    private readonly drafts: DraftStore | null,
    /** What to keep now: this tab's pending edits, and the cells it touched (edited, saved or deleted). */
    private readonly current: () => { pending: PendingEdits; touched: ReadonlySet<string> },
    /** The draft could not be written (quota, storage disabled): the edits still live in memory. */
    private readonly failed: (message: string) => void,
  ) {}

  /** The draft left by an earlier page (or another tab) of this notebook. */
  read(): PendingEdits {
    return parseDraft(this.notebookId, this.drafts?.getItem(draftKey(this.notebookId)) ?? null);
  }

  /** Writes soon, once for a burst of changes. */
  writeSoon(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.writeNow();
    }, WRITE_DELAY_MS);
  }

  /** Persist (or clear) the draft right away: called on page hide and disconnect. */
  writeNow(): void {
    if (this.drafts === null) return;
    const key = draftKey(this.notebookId);
    const { pending, touched } = this.current();
    try {
      const stored = parseDraft(this.notebookId, this.drafts.getItem(key));
      const text = serializeDraft(this.notebookId, mergeDraft(stored, pending, touched), Date.now());
      if (text === null) this.drafts.removeItem(key);
      else this.drafts.setItem(key, text);
    } catch (err) {
      // Quota exceeded or storage disabled: the edits still live in memory.
      if (!(err instanceof DOMException)) throw err;
      this.failed(`Could not keep a local draft: ${err.message}`);
    }
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
