import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { popDeleted, pushDeleted, MAX_UNDO_DELETES, type DeletedCell } from "../../components/notebook/model/deleted-cells";
import { clockText, etaMs, lastProgress } from "../../components/notebook/model/eta";
import { findMatches, replaceAll, replaceOne, stepMatch, type FindCell } from "../../components/notebook/model/find-replace";
import { filterCommands, fuzzyScore, moveHighlight } from "../../components/notebook/model/palette";
import { parseChoice, resolveTheme, THEME_BOOT_SCRIPT } from "../../components/shell/model/theme";
import { headings, tableOfContents } from "../../components/notebook/model/toc";

describe("command palette filtering", () => {
  const commands = [
    { id: "restart", label: "Restart the kernel", keys: "0, 0" },
    { id: "run-all", label: "Run all cells", keys: "" },
    { id: "toc", label: "Toggle the table of contents", keys: "T" },
  ];
  it("keeps commands whose label has the query's letters in order, best first", () => {
    assert.deepEqual(filterCommands(commands, "ra").map((c) => c.id), ["run-all", "restart"]);
    assert.deepEqual(filterCommands(commands, "toc").map((c) => c.id), ["toc"]);
    assert.deepEqual(filterCommands(commands, "xyz"), []);
    assert.deepEqual(filterCommands(commands, "").map((c) => c.id), ["restart", "run-all", "toc"]);
    assert.equal(fuzzyScore("RUN", "Run all cells") !== null, true, "case-insensitive");
    // Letters that follow each other beat letters at word starts scattered through the label.
    assert.ok(fuzzyScore("run", "Run all")! > fuzzyScore("run", "Restart unused nodes")!);
  });
  it("moves the highlight around the list, wrapping", () => {
    assert.equal(moveHighlight(0, -1, 3), 2);
    assert.equal(moveHighlight(2, 1, 3), 0);
    assert.equal(moveHighlight(0, 1, 0), -1);
  });
});

describe("table of contents", () => {
  it("lists ATX and setext headings of markdown cells in order, not code or fenced lines", () => {
    const toc = tableOfContents([
      { id: "m1", kind: "markdown", source: "# Intro\ntext\n## Setup *fast*\n```\n# not a heading\n```" },
      { id: "c1", kind: "code", source: "# a Python comment" },
      { id: "m2", kind: "markdown", source: "Results\n=======\n\nDetails\n---\n### [Link](http://x) ###" },
    ]);
    assert.deepEqual(toc, [
      { cellId: "m1", level: 1, text: "Intro" },
      { cellId: "m1", level: 2, text: "Setup fast" },
      { cellId: "m2", level: 1, text: "Results" },
      { cellId: "m2", level: 2, text: "Details" },
      { cellId: "m2", level: 3, text: "Link" },
    ]);
    assert.deepEqual(headings("#nospace\n- item\n---"), []);
  });
});

describe("find and replace across cells", () => {
  const cells: FindCell[] = [
    { id: "a", source: "lr = 0.1\nprint(lr)", locked: false },
    { id: "b", source: "LR in a form cell: lr", locked: true },
    { id: "c", source: "no match", locked: false },
  ];
  it("finds every match in cell order, case-insensitive unless asked", () => {
    assert.deepEqual(findMatches(cells, "lr").map((m) => `${m.cellId}:${m.start}`), ["a:0", "a:15", "b:0", "b:19"]);
    assert.deepEqual(findMatches(cells, "lr", { caseSensitive: true }).map((m) => `${m.cellId}:${m.start}`), ["a:0", "a:15", "b:19"]);
    assert.deepEqual(findMatches(cells, ""), []);
  });
  it("steps through matches, wrapping both ways", () => {
    assert.equal(stepMatch(-1, 1, 4), 0);
    assert.equal(stepMatch(-1, -1, 4), 3);
    assert.equal(stepMatch(3, 1, 4), 0);
    assert.equal(stepMatch(0, -1, 4), 3);
  });
  it("replaces one match, never in a locked cell", () => {
    const [first, , locked] = findMatches(cells, "lr");
    assert.deepEqual(replaceOne(cells, first!, "rate"), { cellId: "a", source: "rate = 0.1\nprint(lr)" });
    assert.equal(replaceOne(cells, locked!, "rate"), null);
  });
  it("replaces all matches of the unlocked cells and counts the locked ones it left", () => {
    assert.deepEqual(replaceAll(cells, "lr", "rate"), { sources: { a: "rate = 0.1\nprint(rate)" }, replaced: 2, skipped: 2 });
    assert.deepEqual(replaceAll(cells, "a", "aa").sources.c, "no maatch");
  });
});

describe("undo of cell deletion", () => {
  const d = (source: string, index: number, afterId: string | null): DeletedCell => ({ source, kind: "code", index, afterId });
  it("puts the newest deleted cell back after the cell it followed, else at its old index", () => {
    const stack = pushDeleted(pushDeleted([], d("one", 1, "x")), d("two", 2, "gone"));
    const first = popDeleted(stack, [{ id: "x" }, { id: "y" }, { id: "z" }]);
    assert.equal(first?.cell.source, "two");
    assert.equal(first?.index, 2, "its neighbour is gone: the old index");
    const second = popDeleted(first!.rest, [{ id: "y" }, { id: "x" }]);
    assert.equal(second?.index, 2, "after x, wherever x is now");
    assert.equal(popDeleted(second!.rest, []), null);
    assert.equal(popDeleted([d("top", 0, null)], [{ id: "x" }])?.index, 0);
  });
  it("keeps a bounded number of levels", () => {
    let stack: DeletedCell[] = [];
    for (let i = 0; i < MAX_UNDO_DELETES + 5; i++) stack = pushDeleted(stack, d(String(i), 0, null));
    assert.equal(stack.length, MAX_UNDO_DELETES);
    assert.equal(stack.at(-1)?.source, String(MAX_UNDO_DELETES + 4));
  });
});

describe("elapsed time and ETA", () => {
  it("reads the newest n/total counter of tqdm-style output", () => {
    assert.deepEqual(lastProgress(" 10%|█         | 10/100 [00:01<00:09]\r 42%|████      | 42/100 [00:04<00:06]"), { done: 42, total: 100 });
    assert.deepEqual(lastProgress("step 3/10 loss 0.5\nstep 4/10 loss 0.4\n"), { done: 4, total: 10 });
    assert.equal(lastProgress("date 2024/12/23 and 1.5/2.0 and a/b"), null);
    assert.equal(lastProgress("12/5"), null, "more done than the total is not progress");
  });
  it("estimates the time left from the time per step so far", () => {
    assert.equal(etaMs(10_000, { done: 25, total: 100 }), 30_000);
    assert.equal(etaMs(10_000, { done: 0, total: 100 }), null);
    assert.equal(etaMs(10_000, null), null);
    assert.equal(etaMs(10_000, { done: 100, total: 100 }), 0);
  });
  it("writes a clock", () => {
    assert.equal(clockText(7_400), "0:07");
    assert.equal(clockText(62_000), "1:02");
    assert.equal(clockText(3_723_000), "1:02:03");
  });
});

describe("theme", () => {
  it("resolves the choice against the system setting", () => {
    assert.equal(resolveTheme("system", true), "dark");
    assert.equal(resolveTheme("system", false), "light");
    assert.equal(resolveTheme("light", true), "light");
    assert.equal(resolveTheme("dark", false), "dark");
    assert.equal(parseChoice("bogus"), "system");
  });
  it("boot script agrees with resolveTheme for every stored choice and system setting", () => {
    for (const stored of [null, "light", "dark", "system", "junk"]) {
      for (const prefersDark of [false, true]) {
        const attrs: Record<string, string> = {};
        const root = { setAttribute: (k: string, v: string) => (attrs[k] = v), style: { colorScheme: "" } };
        const run = new Function("localStorage", "window", "document", THEME_BOOT_SCRIPT);
        run({ getItem: () => stored }, { matchMedia: () => ({ matches: prefersDark }) }, { documentElement: root });
        assert.equal(attrs["data-theme"], resolveTheme(parseChoice(stored), prefersDark), `${stored} ${prefersDark}`);
      }
    }
  });
});
