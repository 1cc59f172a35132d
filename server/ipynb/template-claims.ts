/**
 * A cell's metadata may claim that its code is rendered from a scenario
 * template, but only the catalog can vouch for that: a claimed cell is
 * attached when the catalog renders exactly its code for its template and
 * values (the lab's own export), and stays detached otherwise, with a note.
 */
import type { CellTemplate } from "../core/protocol/notebook-model";
import type { CellInput } from "../persistence/types";
import { toClientError } from "../errors";
import type { TemplateRenderer } from "../notebook/template-cells";

export interface TemplateClaim {
  /** The cell's index in the file (and in `cells`). */
  index: number;
  /** The template as the file states it, attached. */
  claimed: CellTemplate;
}

/** Longest catalog refusal quoted in a note. */
const REASON_MAX_CHARS = 300;

/**
 * Attaches each claimed template cell whose code is exactly what the catalog
 * renders for its template and values (an export of this lab's own notebook);
 * the others stay detached, each with a note saying why. Returns the notes.
 */
export async function settleTemplateClaims(cells: CellInput[], claims: readonly TemplateClaim[], templates: TemplateRenderer | undefined): Promise<string[]> {
  const notes: string[] = [];
  // One at a time: the catalog is one process, and a file may claim thousands of cells.
  for (const { index, claimed } of claims) {
    const cell = cells[index]!;
    const checked = await checkClaim(cell.source, claimed, templates);
    if ("attached" in checked) cell.template = checked.attached;
    else notes.push(`cells[${index}]: claimed template ${claimed.id}; imported detached: its code was not rendered by this lab (${checked.why})`);
  }
  return notes;
}

/** The catalog's template when it renders exactly `source` for the claim's id and values, else why not. */
async function checkClaim(source: string, claimed: CellTemplate, templates: TemplateRenderer | undefined): Promise<{ attached: CellTemplate } | { why: string }> {
  if (templates === undefined) return { why: "no scenario catalog here to check it against" };
  try {
    const rendered = await templates.render(claimed.id, claimed.parameters);
    if (rendered.source !== source) return { why: "its code differs from what the template renders for its values" };
    return { attached: rendered.template };
  } catch (error) {
    // A refusal (unknown template, invalid values) is the file's; anything else (the catalog down) is not, but the cell still cannot be vouched for.
    const failure = toClientError(error);
    const reason = failure.error.slice(0, REASON_MAX_CHARS);
    return { why: failure.expected ? `the scenario catalog refuses it: ${reason}` : `the scenario catalog could not check it: ${reason}` };
  }
}
