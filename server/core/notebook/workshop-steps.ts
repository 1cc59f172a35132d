/**
 * A scenario notebook's steps, for workshops: each templated code cell (an
 * experiment, then the verdicts) is one step, and every other cell belongs
 * to the step of the next templated code cell (its explanation and
 * question come before it). Pure: the server refuses to run a step the
 * facilitator has not revealed, and the notebook page folds it, with the
 * same answer.
 */
import type { CellKind, CellTemplate } from "../protocol/notebook-model";
import type { WorkshopStep } from "../protocol/workshop-model";

export interface StepCell {
  id: string;
  kind: CellKind;
  template: Pick<CellTemplate, "id"> | null;
  executionCount: number | null;
}

function isStepCell(cell: StepCell): boolean {
  return cell.kind === "code" && cell.template !== null;
}

/** "dp-basics/large-model" → "Large model". */
export function stepTitle(templateId: string): string {
  const name = templateId.slice(templateId.lastIndexOf("/") + 1).replace(/[-_]+/g, " ").trim();
  return name === "" ? templateId : name[0]!.toUpperCase() + name.slice(1);
}

/** The notebook's steps in order. */
export function notebookSteps(cells: readonly StepCell[]): WorkshopStep[] {
  return cells.filter(isStepCell).map((cell) => ({ id: cell.template!.id, title: stepTitle(cell.template!.id) }));
}

/**
 * The step index of each cell (parallel to `cells`): the next step cell's,
 * the last step's for cells after it, and 0 in a notebook without steps.
 */
export function stepOfEachCell(cells: readonly StepCell[]): number[] {
  const out = new Array<number>(cells.length);
  let stepsAfter = cells.filter(isStepCell).length;
  const last = Math.max(0, stepsAfter - 1);
  for (let i = cells.length - 1; i >= 0; i -= 1) {
    if (isStepCell(cells[i]!)) stepsAfter -= 1;
    out[i] = Math.min(stepsAfter, last);
  }
  return out;
}

/** The ids of the cells of steps not revealed yet (`revealedSteps` steps are). */
export function hiddenCells(cells: readonly StepCell[], revealedSteps: number): Set<string> {
  const steps = stepOfEachCell(cells);
  return new Set(cells.filter((_, i) => steps[i]! >= revealedSteps).map((cell) => cell.id));
}

/** The furthest step whose cell has run (0-based), or null when none has. */
export function furthestStepRun(cells: readonly StepCell[]): number | null {
  let step = -1;
  let furthest: number | null = null;
  for (const cell of cells) {
    if (!isStepCell(cell)) continue;
    step += 1;
    if (cell.executionCount !== null) furthest = step;
  }
  return furthest;
}
