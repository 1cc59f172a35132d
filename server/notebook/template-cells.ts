/**
 * Rules for cells rendered from scenario templates, on the notebook document:
 * which cells a form change re-renders, when code may be edited, which
 * questions can be answered. Rendering itself belongs to the catalog.
 */
import type { Cell, CellTemplate, NotebookDocument, ParameterValue, PredictQuestion } from "../core/protocol/notebook-model";
import { CommandError } from "../errors";

/** The scenario catalog's renderer (ScenarioCatalog in production). */
export interface TemplateRenderer {
  render(templateId: string, params: Record<string, ParameterValue>): Promise<{ source: string; template: CellTemplate }>;
}

export const NO_TEMPLATES: TemplateRenderer = {
  render: async () => {
    throw new CommandError("unavailable", "this lab has no scenario catalog");
  },
};

export function scenarioOf(templateId: string): string {
  return templateId.split("/", 1)[0]!;
}

export function isAttached(cell: Cell): cell is Cell & { template: CellTemplate } {
  return cell.template !== null && !cell.template.detached;
}

export function attachedTemplate(cell: Cell): CellTemplate {
  if (!cell.template) throw new CommandError("invalid", `cell ${cell.id} is not rendered from a template`);
  if (cell.template.detached) throw new CommandError("conflict", `cell ${cell.id} is detached from its template; reattach it to use the form`);
  return cell.template;
}

/** Attached cells of the same scenario: a form change applies to all of them so the verdicts run with the values shown. */
export function attachedSiblings(doc: NotebookDocument, scenario: string): Array<Cell & { template: CellTemplate }> {
  return doc.cells.filter((cell): cell is Cell & { template: CellTemplate } => isAttached(cell) && scenarioOf(cell.template.id) === scenario);
}

/** Text edits of an attached cell would be overwritten by the next form change: refuse them. */
export function assertEditable(cell: Cell): void {
  if (isAttached(cell)) {
    throw new CommandError("conflict", `cell ${cell.id} is rendered from template ${cell.template.id}: change its form, or detach it to edit the code`);
  }
}

/**
 * Whether the experiment a question is about has already run here (its cell,
 * or the scenario's verdicts cell): an answer given then is not a blind prediction.
 */
export function questionAlreadyRun(doc: NotebookDocument, questionId: string): boolean {
  const scenario = scenarioOf(questionId);
  return doc.cells.some(
    (cell) =>
      cell.template !== null &&
      (cell.template.question?.id === questionId || cell.template.id === `${scenario}/verdicts`) &&
      (cell.lastRun !== null || cell.runState !== "idle"),
  );
}

export function findQuestion(doc: NotebookDocument, questionId: string): PredictQuestion {
  for (const cell of doc.cells) {
    if (cell.template?.question?.id === questionId) return cell.template.question;
  }
  throw new CommandError("not-found", `no question ${questionId} in this notebook`);
}
