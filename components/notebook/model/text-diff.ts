/**
 * The smallest single replacement that turns one text into another (common
 * prefix and suffix kept). Applying a remote change this way leaves the
 * user's cursor and selection where they were unless the change touches them.
 */
export interface TextReplacement {
  /** Offsets in the old text, end exclusive. */
  start: number;
  end: number;
  text: string;
}

export function minimalReplacement(before: string, after: string): TextReplacement | null {
  if (before === after) return null;
  const limit = Math.min(before.length, after.length);
  let start = 0;
  while (start < limit && before.charCodeAt(start) === after.charCodeAt(start)) start += 1;
  // Never split a surrogate pair.
  if (start > 0 && isHighSurrogate(before.charCodeAt(start - 1))) start -= 1;
  let suffix = 0;
  while (
    suffix < limit - start &&
    before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
  ) {
    suffix += 1;
  }
  if (suffix > 0 && isLowSurrogate(before.charCodeAt(before.length - suffix))) suffix -= 1;
  return { start, end: before.length - suffix, text: after.slice(start, after.length - suffix) };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Tells the editor's own typing, coming back through the store, from a
 * genuinely external value. Re-renders can lag behind fast typing: a value
 * the editor produced a few keystrokes ago must not be written back over
 * what was typed since.
 */
export class EditorEchoes {
  private emitted: string[] = [];

  /** The editor produced this text (the user typed). */
  typed(text: string): void {
    this.emitted.push(text);
    if (this.emitted.length > MAX_ECHOES) this.emitted.splice(0, this.emitted.length - MAX_ECHOES);
  }

  /** A value from outside: null when it is (maybe a stale) echo of our typing, else the text the editor should show. */
  incoming(value: string): string | null {
    const at = this.emitted.lastIndexOf(value);
    if (at !== -1) {
      this.emitted.splice(0, at + 1);
      return null;
    }
    this.emitted = [];
    return value;
  }
}

const MAX_ECHOES = 200;
