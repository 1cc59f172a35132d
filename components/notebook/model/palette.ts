/**
 * The command palette's list: commands filtered by a fuzzy query (the query's
 * letters in order, anywhere in the label), best matches first. A match
 * scores higher for letters that follow each other and for letters at the
 * start of a word, so "ra" puts "Run all" before "Restart the kernel".
 */

export interface PaletteCommand {
  id: string;
  label: string;
  /** Its keys as the help writes them ("Shift+Enter"), or "". */
  keys: string;
  /** Offered but greyed out (e.g. Interrupt with an idle kernel). */
  disabled?: boolean;
}

/** The score of `query` against `label`, or null when the letters are not all there in order. */
export function fuzzyScore(query: string, label: string): number | null {
  const q = query.trim().toLowerCase();
  if (q === "") return 0;
  const l = label.toLowerCase();
  let score = 0;
  let from = 0;
  let previous = -2;
  for (const ch of q) {
    if (ch === " ") continue;
    const at = l.indexOf(ch, from);
    if (at === -1) return null;
    score += 1;
    if (at === previous + 1) score += 3;
    if (at === 0 || /[\s(/-]/.test(l[at - 1] ?? "")) score += 2;
    previous = at;
    from = at + 1;
  }
  // Among equals, the shorter label is the closer one.
  return score - l.length / 1000;
}

export function filterCommands<T extends PaletteCommand>(commands: readonly T[], query: string): T[] {
  const scored: Array<{ command: T; score: number; order: number }> = [];
  commands.forEach((command, order) => {
    const score = fuzzyScore(query, command.label);
    if (score !== null) scored.push({ command, score, order });
  });
  if (query.trim() === "") return scored.map((s) => s.command);
  return scored.sort((a, b) => b.score - a.score || a.order - b.order).map((s) => s.command);
}

/** Arrow keys move the highlight, wrapping around; an empty list has none. */
export function moveHighlight(current: number, delta: number, count: number): number {
  if (count === 0) return -1;
  return (((current + delta) % count) + count) % count;
}
