/**
 * Find and replace across the notebook's cells, as pure functions of the
 * cells' text. Plain text, case-insensitive unless asked. Cells rendered from
 * a scenario's form (attached templates) are read-only: their matches are
 * found and counted, but never replaced — their text is the form's, and an
 * edit would break the locked parameter parts (detach the cell to edit it).
 */

export interface FindCell {
  id: string;
  source: string;
  /** Read-only here (an attached template cell). */
  locked: boolean;
}

export interface FindOptions {
  caseSensitive: boolean;
}

export interface Match {
  cellId: string;
  start: number;
  end: number;
  locked: boolean;
}

export function findMatches(cells: readonly FindCell[], query: string, options: FindOptions = { caseSensitive: false }): Match[] {
  if (query === "") return [];
  const needle = options.caseSensitive ? query : query.toLowerCase();
  const matches: Match[] = [];
  for (const cell of cells) {
    const hay = options.caseSensitive ? cell.source : cell.source.toLowerCase();
    for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + needle.length)) {
      matches.push({ cellId: cell.id, start: at, end: at + needle.length, locked: cell.locked });
    }
  }
  return matches;
}

/** The next (delta +1) or previous (-1) match, wrapping around. */
export function stepMatch(current: number, delta: 1 | -1, count: number): number {
  if (count === 0) return -1;
  if (current < 0) return delta === 1 ? 0 : count - 1;
  return (current + delta + count) % count;
}

/** The cell's new text with one match replaced; null when the match is locked or out of date. */
export function replaceOne(cells: readonly FindCell[], match: Match, replacement: string): { cellId: string; source: string } | null {
  const cell = cells.find((c) => c.id === match.cellId);
  if (cell === undefined || cell.locked || match.end > cell.source.length) return null;
  return { cellId: cell.id, source: cell.source.slice(0, match.start) + replacement + cell.source.slice(match.end) };
}

export interface ReplaceAllResult {
  /** The new text of each changed cell. */
  sources: Record<string, string>;
  /** Matches replaced. */
  replaced: number;
  /** Matches left because their cell is locked. */
  skipped: number;
}

export function replaceAll(cells: readonly FindCell[], query: string, replacement: string, options: FindOptions = { caseSensitive: false }): ReplaceAllResult {
  const result: ReplaceAllResult = { sources: {}, replaced: 0, skipped: 0 };
  const matches = findMatches(cells, query, options);
  for (const cell of cells) {
    const own = matches.filter((m) => m.cellId === cell.id);
    if (own.length === 0) continue;
    if (cell.locked) {
      result.skipped += own.length;
      continue;
    }
    let source = "";
    let from = 0;
    for (const m of own) {
      source += cell.source.slice(from, m.start) + replacement;
      from = m.end;
    }
    result.sources[cell.id] = source + cell.source.slice(from);
    result.replaced += own.length;
  }
  return result;
}
