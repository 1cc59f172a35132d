/** The browser draft: read once, written soon after a change or at once, shared by tabs, and a full storage said once, not thrown. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DraftKeeper, type DraftStore } from "../../components/notebook/model/draft-keeper";
import { pollUntil } from "../helpers/daemons";
import { draftKey, recordEdit, serializeDraft, type PendingEdits } from "../../components/notebook/model/pending-edits";

class MemoryDrafts implements DraftStore {
  readonly items = new Map<string, string>();
  full = false;
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    if (this.full) throw new DOMException("the quota has been exceeded", "QuotaExceededError");
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

const edit = (source: string): PendingEdits => recordEdit({}, "a", { source, kind: "code", index: 0, base: null }, 1);

describe("DraftKeeper", () => {
  it("reads the draft another page left, writes this tab's edits, and clears the draft when nothing is pending", () => {
    const drafts = new MemoryDrafts();
    drafts.setItem(draftKey("nb"), serializeDraft("nb", edit("left behind"), 1) ?? "");
    let pending: PendingEdits = {};
    const keeper = new DraftKeeper("nb", drafts, () => ({ pending, touched: new Set(["a"]) }), () => assert.fail("no failure"));
    assert.equal(keeper.read().a?.source, "left behind");
    pending = edit("mine");
    keeper.writeNow();
    assert.match(drafts.getItem(draftKey("nb")) ?? "", /mine/);
    pending = {};
    keeper.writeNow();
    assert.equal(drafts.getItem(draftKey("nb")), null);
  });

  it("writes once, shortly, for a burst of changes", async () => {
    const drafts = new MemoryDrafts();
    let reads = 0;
    const keeper = new DraftKeeper("nb", drafts, () => (reads++, { pending: edit("x"), touched: new Set(["a"]) }), () => undefined);
    keeper.writeSoon();
    keeper.writeSoon();
    assert.equal(reads, 0);
    await pollUntil("the draft written", () => drafts.items.size > 0, 5_000, 20);
    assert.equal(reads, 1);
    keeper.stop();
  });

  it("says once that storage is full, and keeps the edits in memory", () => {
    const drafts = new MemoryDrafts();
    drafts.full = true;
    const said: string[] = [];
    const keeper = new DraftKeeper("nb", drafts, () => ({ pending: edit("x"), touched: new Set(["a"]) }), (m) => said.push(m));
    keeper.writeNow();
    assert.deepEqual(said, ["Could not keep a local draft: the quota has been exceeded"]);
  });

  it("keeps nothing without a store", () => {
    const keeper = new DraftKeeper("nb", null, () => ({ pending: edit("x"), touched: new Set() }), () => undefined);
    assert.deepEqual(keeper.read(), {});
    keeper.writeNow();
  });
});
