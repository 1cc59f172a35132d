/**
 * Progress bars (tqdm) redraw their line with `\r`: a bar updated 10,000
 * times is 10,000 copies of one line. Stream text is kept (in the document,
 * the database and exported notebooks) with what a terminal would no longer
 * show dropped, so a bar stays one line however long it runs; the live view
 * plays the text through the console model (components/workshops/model/console-text.ts)
 * as before.
 *
 * Per line: the segments between `\r`s overwrite each other from the left
 * (`abcdef\rxy` shows `xycdef`). The last, unfinished line keeps its newest
 * segment apart (`shown\rnewest`), because text appended later continues at
 * the cursor, which is the end of that segment. So collapsing is incremental:
 * collapsing the collapsed text plus more equals collapsing all of it.
 * Lines with escape sequences or backspaces (cursor moves, colours) are kept
 * as they are: their width is not their length.
 */

export function collapseOverwrites(text: string): string {
  if (!text.includes("\r")) return text;
  const lines = text.split("\n");
  return lines.map((line, i) => collapseLine(line, i === lines.length - 1)).join("\n");
}

/** `before + added`, collapsed, given that `before` already is: only its last line is looked at again. */
export function appendCollapsed(before: string, added: string): string {
  if (!added.includes("\r") && !lastLineOf(before).includes("\r")) return before + added;
  const start = before.lastIndexOf("\n") + 1;
  return before.slice(0, start) + collapseOverwrites(before.slice(start) + added);
}

function lastLineOf(text: string): string {
  return text.slice(text.lastIndexOf("\n") + 1);
}

function collapseLine(line: string, unfinished: boolean): string {
  if (!line.includes("\r") || line.includes("\x1b") || line.includes("\b")) return line;
  const segments = line.split("\r");
  if (!unfinished) return overwrite(segments);
  const newest = segments.pop() ?? "";
  return `${overwrite(segments)}\r${newest}`;
}

function overwrite(segments: string[]): string {
  return segments.reduce((shown, segment) => segment + shown.slice(segment.length), "");
}
