/**
 * What a terminal would show for a stream of console output.
 *
 * Progress bars (tqdm, pip, rich) redraw a line with `\r` or move the cursor
 * with CSI sequences; printed verbatim they turn into thousands of lines. This
 * module plays the text through a small line-oriented terminal model:
 *
 * - `\n` moves to the start of the next line; `\r` returns to the start of
 *   the current line, so following text overwrites it (`\r\n` is therefore a
 *   plain newline); `\b` moves one column left.
 * - CSI `A`/`B`/`C`/`D`/`G` move the cursor (tqdm's nested bars use `A`);
 *   CSI `K` erases in the line; other non-SGR CSI sequences are dropped.
 * - SGR colour sequences (CSI … `m`) and OSC sequences are kept intact, as
 *   zero-width prefixes of the character that follows them, for the ANSI
 *   renderer.
 *
 * It is incremental (`ConsoleBuffer.write` per chunk, escape sequences may be
 * split across chunks) and keeps only the last `EDITABLE_LINES` lines
 * editable, so a 100 MB stream costs linear time. Known simplification: a
 * character overwritten in place keeps the colour prefixes of the old one and
 * adds the new ones, so colours of the untouched rest of that line can differ
 * from a real terminal's.
 */

import { AnsiUp } from "ansi_up";

const EDITABLE_LINES = 200;
const MAX_ESCAPE_CHARS = 4096;
const ESC = "\x1b";

interface Line {
  /** One entry per column: zero-width escape prefixes + one visible character. */
  glyphs: string[];
  /** Escapes written after the last character, or taken from erased glyphs. */
  trailing: string;
}

export class ConsoleBuffer {
  /** Lines that scrolled out of reach of the cursor, already joined, each ending in "\n". */
  private frozen = "";
  private lines: Line[] = [emptyLine()];
  private row = 0;
  private col = 0;
  /** Escapes seen since the last visible character. */
  private pendingEscapes = "";
  /** An escape sequence cut off at the end of the previous chunk. */
  private partial = "";

  write(chunk: string): this {
    const text = this.partial + chunk;
    this.partial = "";
    let i = 0;
    while (i < text.length) {
      const ch = text[i] as string;
      if (ch === ESC) {
        const end = escapeEnd(text, i);
        if (end === -1) {
          if (text.length - i > MAX_ESCAPE_CHARS) {
            i += 1; // an unterminated "sequence" this long is not one: drop the ESC, show the rest
            continue;
          }
          this.partial = text.slice(i);
          break;
        }
        this.escape(text.slice(i, end));
        i = end;
        continue;
      }
      if (ch === "\n") this.newline();
      else if (ch === "\r") this.col = 0;
      else if (ch === "\b") this.col = Math.max(0, this.col - 1);
      else if (ch === "\t" || (ch >= " " && ch !== "\x7f")) {
        // Keep surrogate pairs together as one column.
        const code = text.charCodeAt(i);
        const width = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
        if (i + width > text.length) {
          this.partial = text.slice(i);
          break;
        }
        this.put(text.slice(i, i + width));
        i += width;
        continue;
      }
      // Other C0 control characters (bell, NUL, …) are not shown.
      i += 1;
    }
    return this;
  }

  toString(): string {
    const shown = this.lines.map(renderLine).join("\n");
    return this.frozen + shown + this.pendingEscapes;
  }

  private line(): Line {
    return this.lines[this.row] as Line;
  }

  private put(ch: string): void {
    const line = this.line();
    while (line.glyphs.length < this.col) line.glyphs.push(" ");
    const old = line.glyphs[this.col];
    const oldEscapes = old === undefined ? "" : escapesOf(old);
    line.glyphs[this.col] = oldEscapes + this.pendingEscapes + ch;
    this.pendingEscapes = "";
    this.col += 1;
  }

  private newline(): void {
    this.flushEscapesToLine();
    this.row += 1;
    this.col = 0;
    if (this.row === this.lines.length) this.lines.push(emptyLine());
    while (this.lines.length > EDITABLE_LINES && this.row > 0) {
      const first = this.lines.shift() as Line;
      this.frozen += renderLine(first) + "\n";
      this.row -= 1;
    }
  }

  private flushEscapesToLine(): void {
    if (this.pendingEscapes === "") return;
    this.line().trailing += this.pendingEscapes;
    this.pendingEscapes = "";
  }

  private escape(seq: string): void {
    const csi = /^\x1b\[([0-9;?]*)([@-~])$/.exec(seq);
    if (csi === null) {
      // OSC (hyperlinks) is zero width and kept for the renderer; malformed
      // CSI and two-byte escapes (save cursor, keypad mode) are dropped.
      if (seq.startsWith("\x1b]")) this.pendingEscapes += seq;
      return;
    }
    const params = csi[1] ?? "";
    const final = csi[2];
    const n = Math.max(1, Number.parseInt(params, 10) || 1);
    switch (final) {
      case "m":
        this.pendingEscapes += seq;
        return;
      case "A":
        this.flushEscapesToLine();
        this.row = Math.max(0, this.row - n);
        return;
      case "B":
        this.flushEscapesToLine();
        this.row = Math.min(this.lines.length - 1, this.row + n);
        return;
      case "C":
        this.col += n;
        return;
      case "D":
        this.col = Math.max(0, this.col - n);
        return;
      case "G":
        this.col = n - 1;
        return;
      case "K":
        this.eraseInLine(params === "" ? 0 : Number.parseInt(params, 10));
        return;
      default:
        // Screen-level sequences (clear screen, scroll regions, …) mean nothing in an output area.
        return;
    }
  }

  private eraseInLine(mode: number): void {
    const line = this.line();
    if (mode === 0) {
      const removed = line.glyphs.splice(this.col);
      line.trailing = removed.map(escapesOf).join("") + line.trailing;
    } else if (mode === 1) {
      for (let c = 0; c <= this.col && c < line.glyphs.length; c++) {
        line.glyphs[c] = escapesOf(line.glyphs[c] as string) + " ";
      }
    } else if (mode === 2) {
      line.trailing = line.glyphs.map(escapesOf).join("") + line.trailing;
      line.glyphs = [];
    }
  }
}

/**
 * Renders a stream whose text only grows (the usual case while a cell runs)
 * by feeding the buffer just the new suffix; any other change starts over.
 */
export class IncrementalConsole {
  private seen = "";
  private buffer = new ConsoleBuffer();
  private rendered = "";

  render(text: string): string {
    if (text === this.seen) return this.rendered;
    if (text.length > this.seen.length && text.startsWith(this.seen)) {
      this.buffer.write(text.slice(this.seen.length));
    } else {
      this.buffer = new ConsoleBuffer().write(text);
    }
    this.seen = text;
    this.rendered = this.buffer.toString();
    return this.rendered;
  }
}

/** One-shot form: the terminal-rendered text of a whole stream. */
export function terminalText(text: string): string {
  return new ConsoleBuffer().write(text).toString();
}

/**
 * ANSI-coloured text → HTML for a <pre>. ansi_up escapes `<`, `>`, `&`, quotes
 * (escape_html is forced on here), and maps the 16 base colours to
 * `ansi-*-fg`/`ansi-*-bg` classes (styled in components/notebook/OutputArea.css, their
 * colours in app/tokens.css); 256-colour and truecolour become inline
 * `color:rgb(…)` styles. OSC 8 hyperlinks become links only for http(s).
 */
export function ansiToHtml(text: string): string {
  const au = new AnsiUp();
  au.escape_html = true;
  au.use_classes = true;
  au.url_allowlist = { http: 1, https: 1 };
  return au.ansi_to_html(text);
}

function emptyLine(): Line {
  return { glyphs: [], trailing: "" };
}

function renderLine(line: Line): string {
  return line.glyphs.join("") + line.trailing;
}

/** The escape prefix of a glyph (everything before its last character). */
function escapesOf(glyph: string): string {
  if (glyph.length <= 1 || !glyph.includes(ESC)) return "";
  const last = glyph.codePointAt(glyph.length - 2);
  const charWidth = last !== undefined && last > 0xffff ? 2 : 1;
  return glyph.slice(0, glyph.length - charWidth);
}

/**
 * Index just past the escape sequence starting at `start`, or -1 when the
 * text ends before the sequence does (it continues in the next chunk).
 */
function escapeEnd(text: string, start: number): number {
  const kind = text[start + 1];
  if (kind === undefined) return -1;
  if (kind === "[") {
    for (let j = start + 2; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c >= 0x40 && c <= 0x7e) return j + 1;
      // Anything but parameter/intermediate bytes ends a malformed sequence.
      if (c < 0x20 || c > 0x3f) return j;
    }
    return -1;
  }
  if (kind === "]") {
    for (let j = start + 2; j < text.length; j++) {
      if (text[j] === "\x07") return j + 1;
      if (text[j] === ESC) {
        if (j + 1 >= text.length) return -1;
        return text[j + 1] === "\\" ? j + 2 : j;
      }
    }
    return -1;
  }
  // Two-byte escapes (ESC 7, ESC =, …).
  return start + 2;
}
