/** The title of a fresh copy of a scenario: told apart from every notebook the user has. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_TITLE_CHARS } from "../../server/core/limits";
import { freshCopyTitle } from "../../server/notebook/scenario-copies";

describe("freshCopyTitle", () => {
  it("keeps the scenario's title while no notebook has it", () => {
    assert.equal(freshCopyTitle("DataParallel basics", []), "DataParallel basics");
    assert.equal(freshCopyTitle("DataParallel basics", ["Hangs", "DataParallel basics (2)"]), "DataParallel basics");
  });

  it("numbers a copy from 2, taking the lowest number free", () => {
    assert.equal(freshCopyTitle("DataParallel basics", ["DataParallel basics"]), "DataParallel basics (2)");
    assert.equal(freshCopyTitle("DataParallel basics", ["DataParallel basics", "DataParallel basics (2)"]), "DataParallel basics (3)");
    assert.equal(freshCopyTitle("DataParallel basics", ["DataParallel basics", "DataParallel basics (3)"]), "DataParallel basics (2)");
  });

  it("compares titles as stored (trimmed), and never numbers on top of a copy's own number", () => {
    assert.equal(freshCopyTitle("Hangs", ["  Hangs "]), "Hangs (2)");
    assert.equal(freshCopyTitle("Hangs (2)", ["Hangs (2)"]), "Hangs (2) (2)");
  });

  it("stays within the title limit, shortening the base rather than the number", () => {
    const long = "x".repeat(MAX_TITLE_CHARS);
    const title = freshCopyTitle(long, [long]);
    assert.equal(title.length, MAX_TITLE_CHARS);
    assert.ok(title.endsWith(" (2)"));
    assert.equal(freshCopyTitle(long, [long, title]).slice(-4), " (3)");
  });
});
