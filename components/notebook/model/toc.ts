/**
 * The table of contents: the headings of the markdown cells, in order, each
 * with its cell (clicking one selects and shows that cell). ATX headings
 * (`# …`) and setext headings (a line underlined with === or ---) count;
 * lines inside fenced code blocks do not.
 */

export interface TocEntry {
  cellId: string;
  level: number;
  text: string;
}

export function tableOfContents(cells: ReadonlyArray<{ id: string; kind: string; source: string }>): TocEntry[] {
  const entries: TocEntry[] = [];
  for (const cell of cells) {
    if (cell.kind !== "markdown") continue;
    for (const { level, text } of headings(cell.source)) entries.push({ cellId: cell.id, level, text });
  }
  return entries;
}

export function headings(source: string): Array<{ level: number; text: string }> {
  const found: Array<{ level: number; text: string }> = [];
  const lines = source.split(/\r?\n/);
  let fence: string | null = null;
  lines.forEach((line, i) => {
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMark) {
      const mark = fenceMark[1] as string;
      if (fence === null) fence = mark[0] as string;
      else if (mark[0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      const text = plainText(atx[2] as string);
      if (text !== "") found.push({ level: (atx[1] as string).length, text });
      return;
    }
    const next = lines[i + 1];
    if (next !== undefined && line.trim() !== "" && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s{0,3}([-*+]\s|>)/.test(line)) {
      found.push({ level: next.trim().startsWith("=") ? 1 : 2, text: plainText(line.trim()) });
    }
  });
  return found;
}

/** A heading's text without its inline markup (emphasis, code ticks, link targets). */
function plainText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`~]/g, "")
    .trim();
}
