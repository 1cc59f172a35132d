/**
 * Completion and inspection answers as the browser gets them (the `complete`
 * and `inspect` notebook commands), and the offset conversion between the
 * editor and the kernel: the editor counts UTF-16 code units, Python counts
 * code points. Converted in one place (the server), in both directions.
 */

export interface CompletionMatch {
  text: string;
  /** jedi's kind ("function", "module", "keyword", …), "name" from the plain completer, or "magic". */
  type: string;
}

export type CompletionAnswer =
  /** `matches` replace the text between `from` and `to` (UTF-16 offsets into the code that was sent). */
  | { status: "ok"; matches: CompletionMatch[]; from: number; to: number }
  /** The kernel could not answer now (busy, not started, slow): the editor falls back to words of the cell. */
  | { status: "unavailable"; reason: string };

export type InspectionAnswer =
  /** `text`: signature, type and docstring; empty when `found` is false (the cursor names nothing the kernel knows). */
  | { status: "ok"; found: boolean; text: string }
  | { status: "unavailable"; reason: string };

/** The code-point offset of UTF-16 offset `utf16` in `text` (a surrogate pair is one code point). */
export function toCodePoints(text: string, utf16: number): number {
  const end = Math.max(0, Math.min(utf16, text.length));
  let points = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < end) i += 1;
    points += 1;
  }
  return points;
}

/** The UTF-16 offset of code-point offset `points` in `text`. */
export function toUtf16(text: string, points: number): number {
  let i = 0;
  for (let seen = 0; seen < points && i < text.length; seen++) {
    const code = text.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  return i;
}
