/**
 * What a variant tag says: how many devices ("DDP x4", "DataParallel ×2",
 * "1 device", "4 devices"), which family it belongs to once the count is
 * removed ("DDP"), and the order variants are drawn in (by device count, then
 * name) so colours and bars line up across charts.
 */
const TIMES = /(^|[^A-Za-z0-9])[x×]\s*(\d+)(?![\d.])/i;
const COUNT_WORD = /(^|[^A-Za-z0-9])(\d+)\s*(?:devices?|gpus?)\b/i;

/** The device count a tag names, or null. */
export function deviceCount(tag: string): number | null {
  const match = TIMES.exec(tag) ?? COUNT_WORD.exec(tag);
  if (!match) return null;
  const n = Number(match[2]);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** The tag without its device count ("DDP x4" → "DDP"); "" for "1 device". */
export function variantFamily(tag: string): string {
  const match = TIMES.exec(tag) ?? COUNT_WORD.exec(tag);
  if (!match) return tag.trim();
  return (tag.slice(0, match.index) + match[1] + tag.slice(match.index + match[0].length)).replace(/\s+/g, " ").trim();
}

/** What an untagged variant is called when nothing better is known. */
export const UNTAGGED = "untagged";

/** How a tag reads in legends: the untagged variant (a user's own run) is named after its cell. */
export function variantLabel(tag: string, untagged: string = UNTAGGED): string {
  return tag === "" ? untagged : tag;
}

/** Distinct tags in drawing order: fewer devices first, tags without a count last, then by name. */
export function orderVariants(tags: Iterable<string>): string[] {
  const unique = [...new Set(tags)];
  return unique.sort((a, b) => {
    const ca = deviceCount(a) ?? Infinity;
    const cb = deviceCount(b) ?? Infinity;
    if (ca !== cb) return ca - cb;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}
