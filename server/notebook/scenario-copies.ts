/**
 * A scenario opened again makes a copy only when the user asks for a fresh
 * one, and that copy gets a name of its own: "DataParallel basics (2)", the
 * lowest number not taken, so the list never shows two notebooks that
 * cannot be told apart.
 */
import { MAX_TITLE_CHARS } from "../core/limits";

/** `base` when no notebook has that title, else `base (n)` with the lowest n ≥ 2 that no notebook has; never longer than a title may be. */
export function freshCopyTitle(base: string, taken: Iterable<string>): string {
  const used = new Set(Array.from(taken, (title) => title.trim()));
  const name = base.trim();
  if (!used.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const title = `${name.slice(0, MAX_TITLE_CHARS - suffix.length).trimEnd()}${suffix}`;
    if (!used.has(title)) return title;
  }
}
