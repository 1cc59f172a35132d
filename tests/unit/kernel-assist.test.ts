/**
 * The pure parts of kernel completion and of progress-bar output: offsets
 * between the editor (UTF-16) and Python (code points), when Tab completes
 * rather than indents, the inspection block's fence, and `\r` overwrites
 * collapsing in stored stream text the way a terminal shows it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toCodePoints, toUtf16 } from "../../server/core/protocol/assist-model";
import { appendCollapsed, collapseOverwrites } from "../../server/core/notebook/stream-overwrites";
import { terminalText } from "../../components/workshops/model/console-text";
import { completionIcon, inspectionMarkdown, tabCompletes } from "../../components/notebook/model/kernel-assist";

describe("completion offsets", () => {
  it("convert between UTF-16 units and code points around astral characters", () => {
    const text = "a😀b😀c";
    assert.equal(toCodePoints(text, text.length), 5);
    assert.equal(toCodePoints(text, 3), 2);
    assert.equal(toUtf16(text, 2), 3);
    for (let points = 0; points <= 5; points++) assert.equal(toCodePoints(text, toUtf16(text, points)), points);
    assert.equal(toUtf16(text, 99), text.length);
  });
});

describe("Tab in the editor", () => {
  for (const [before, completes] of [["lab.la", true], ["lab.", true], ["%ti", true], ["x = ", false], ["    ", false], ["", false], ["f(a, ", false]] as const) {
    it(`${completes ? "completes" : "indents"} after ${JSON.stringify(before)}`, () => assert.equal(tabCompletes(before), completes));
  }
  it("maps kernel kinds to icons", () => {
    assert.equal(completionIcon("function"), "function");
    assert.equal(completionIcon("magic"), "keyword");
    assert.equal(completionIcon("statement"), "variable");
  });
  it("fences inspection text longer than any backtick run in it", () => {
    assert.equal(inspectionMarkdown("f(x)"), "```text\nf(x)\n```");
    assert.ok(inspectionMarkdown("use ```code``` here").startsWith("````text\n"));
  });
});

describe("progress bars in stored output", () => {
  const bar = (n: number) => `\r${String(n).padStart(3)}%|${"#".repeat(n / 10).padEnd(10)}|`;

  it("keeps one line however many times a bar redraws", () => {
    let text = "start\n";
    for (let n = 0; n <= 100; n += 10) text = appendCollapsed(text, bar(n));
    text = appendCollapsed(text, "\ndone\n");
    assert.equal(text, `start\n100%|##########|\ndone\n`);
  });

  it("shows what a terminal shows, whichever way the text was cut into chunks", () => {
    const raw = `epoch 1\n${bar(10)}${bar(20)}abc\rxy${bar(30)}\r\nlong line\rshort\nunfinished\rnew`;
    for (const size of [1, 2, 3, 7, 1000]) {
      let text = "";
      for (let i = 0; i < raw.length; i += size) text = appendCollapsed(text, raw.slice(i, i + size));
      assert.equal(text, collapseOverwrites(raw), `chunks of ${size}`);
      assert.equal(terminalText(text), terminalText(raw), `chunks of ${size}`);
    }
    assert.equal(collapseOverwrites("long line\rshort\n"), "shortline\n");
  });

  it("leaves lines with escape sequences as they are", () => {
    const coloured = "\x1b[32m 10%\x1b[0m\r\x1b[32m 20%\x1b[0m\n";
    assert.equal(collapseOverwrites(coloured), coloured);
  });
});
