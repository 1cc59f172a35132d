/**
 * What a user's own (untagged) run is called: after its cell, as the user
 * sees it — the nearest markdown heading above the cell, else the cell's
 * prompt ("cell [7]", the execution count beside it), else its position
 * ("cell 3"). Never "untagged": that is the toolkit's word, not the user's.
 */
import type { Cell } from "../protocol/notebook-model";
import type { ExecutionSummary } from "../protocol/metrics-model";

const MAX_NAME = 60;

/** The chart name of each cell, by cell id. */
export function cellChartNames(cells: readonly Pick<Cell, "id" | "kind" | "source" | "executionCount">[]): Map<string, string> {
  const names = new Map<string, string>();
  let heading: string | null = null;
  cells.forEach((cell, position) => {
    if (cell.kind === "markdown") {
      heading = lastHeading(cell.source) ?? heading;
      return;
    }
    names.set(cell.id, heading ?? (cell.executionCount !== null ? `cell [${cell.executionCount}]` : `cell ${position + 1}`));
  });
  return names;
}

/** The last ATX heading of a markdown source, its inline markup dropped, or null. */
export function lastHeading(source: string): string | null {
  let found: string | null = null;
  let fenced = false;
  for (const line of source.split(/\r?\n/)) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const match = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const text = match[1]!.replace(/[`*]+/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/\s+/g, " ").trim();
    if (text !== "") found = text.length > MAX_NAME ? `${text.slice(0, MAX_NAME - 1).trimEnd()}…` : text;
  }
  return found;
}

/** The untagged variant's name: the cell's name when the chart knows it, else its run's prompt. */
export function untaggedRunName(cellName: string | null, summary: ExecutionSummary | null): string {
  if (cellName !== null && cellName.trim() !== "") return cellName;
  if (summary?.executionCount !== null && summary?.executionCount !== undefined) return `cell [${summary.executionCount}]`;
  return "this cell";
}
