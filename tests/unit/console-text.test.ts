import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ansiToHtml, ConsoleBuffer, IncrementalConsole, terminalText } from "../../components/workshops/model/console-text";

const RED = "\x1b[31m";
const RESET = "\x1b[0m";

describe("carriage returns", () => {
  it("keeps only the last frame of a tqdm-style bar", () => {
    const frames = [0, 10, 50, 100].map((p) => `\r${String(p).padStart(3)}%|${"#".repeat(p / 10).padEnd(10)}| ${p}/100`);
    assert.equal(terminalText(frames.join("") + "\n"), "100%|##########| 100/100\n");
  });

  it("overwrites in place: a shorter frame leaves the tail of the longer one, as a terminal does", () => {
    assert.equal(terminalText("abcdef\rxy"), "xycdef");
  });

  it("treats \\r\\n as a plain newline", () => {
    assert.equal(terminalText("one\r\ntwo\r\n"), "one\ntwo\n");
  });

  it("gives the same result however the stream is split", () => {
    const text = `start\n${RED}\r 10%\r 20%${RESET}\r\n\x1b[Adone\x1b[K\nend`;
    const whole = terminalText(text);
    for (let cut = 0; cut <= text.length; cut++) {
      const split = new ConsoleBuffer().write(text.slice(0, cut)).write(text.slice(cut)).toString();
      assert.equal(split, whole, `split at ${cut}`);
    }
  });

  it("handles a \\r at the end of one chunk followed by \\n at the start of the next", () => {
    assert.equal(new ConsoleBuffer().write("line\r").write("\nnext").toString(), "line\nnext");
  });
});

describe("cursor and erase sequences", () => {
  it("moves up for nested bars (tqdm position=1)", () => {
    const text = "outer 0%\ninner 0%\x1b[A\router 50%\n\rinner 90%";
    assert.equal(terminalText(text), "outer 50%\ninner 90%");
  });

  it("erases to the end of the line with CSI K", () => {
    assert.equal(terminalText("long progress line\rshort\x1b[K"), "short");
  });

  it("erases the whole line with CSI 2K", () => {
    assert.equal(terminalText("abc\x1b[2K\rxy"), "xy");
  });

  it("moves with backspace", () => {
    assert.equal(terminalText("ab\bX"), "aX");
  });

  it("drops bells and screen-level sequences", () => {
    assert.equal(terminalText("a\x07b\x1b[2Jc"), "abc");
  });
});

describe("ANSI colours are preserved for the renderer", () => {
  it("keeps SGR sequences around the text they colour", () => {
    assert.equal(terminalText(`${RED}error${RESET} ok`), `${RED}error${RESET} ok`);
  });

  it("keeps colour codes that end a line", () => {
    assert.equal(terminalText(`${RED}x${RESET}\ny`), `${RED}x${RESET}\ny`);
  });

  it("keeps a reset written before a carriage return", () => {
    const out = terminalText(`${RED}50%${RESET}\r${RED}99%${RESET}`);
    assert.ok(out.includes("99%"));
    assert.ok(!out.includes("50%"));
    assert.ok(out.endsWith(RESET), out);
  });
});

describe("size", () => {
  it("handles a long stream of progress updates in linear time and keeps every finished line", () => {
    let text = "";
    for (let line = 0; line < 2000; line++) {
      for (let p = 0; p <= 100; p += 25) text += `\rline ${line}: ${p}%`;
      text += "\n";
    }
    const out = terminalText(text);
    const lines = out.split("\n");
    assert.equal(lines.length, 2001);
    assert.equal(lines[0], "line 0: 100%");
    assert.equal(lines[1999], "line 1999: 100%");
  });
});

describe("IncrementalConsole", () => {
  it("renders appended text incrementally and restarts when text is replaced", () => {
    const c = new IncrementalConsole();
    assert.equal(c.render("a\r"), "a");
    assert.equal(c.render("a\rb"), "b");
    assert.equal(c.render("a\rb\nc"), "b\nc");
    assert.equal(c.render("fresh"), "fresh");
  });
});

describe("ansiToHtml", () => {
  it("escapes HTML in the text", () => {
    const html = ansiToHtml(`<img src=x onerror=alert(1)> & "quotes"`);
    assert.ok(!html.includes("<img"), html);
    assert.ok(html.includes("&lt;img"), html);
    assert.ok(html.includes("&amp;"), html);
  });

  it("turns colours into classes and removes the escape bytes", () => {
    const html = ansiToHtml(`${RED}Traceback${RESET}`);
    assert.match(html, /<span class="ansi-red-fg">Traceback<\/span>/);
    assert.ok(!html.includes("\x1b"));
  });
});
