/**
 * Committed predictions in a .ipynb file. Export writes each one into the
 * metadata of the cell that asks its question (`mgpulab.prediction`), or,
 * when no cell asks it any more, into the notebook's metadata
 * (`mgpulab.predictions`), so a file never loses one. Import checks each on
 * its own: a malformed, duplicated or future-dated prediction, or one about
 * a question the notebook does not ask, is left out with a note, and costs
 * nothing else of the file.
 */
import { z } from "zod";
import type { CellInput, PredictionInput, StoredPrediction } from "../persistence";
import { MAX_PREDICTION_TEXT } from "../persistence";
import { formatPath } from "./ipynb-error";

/** A prediction as the file carries it: the question as it was asked, the answer, and when. */
export interface ExportedPrediction {
  questionId: string;
  question: string;
  choice: string;
  afterRun: boolean;
  /** ISO 8601 */
  committedAt: string;
}

const text = (what: string) => z.string().min(1, `the ${what} is empty`).max(MAX_PREDICTION_TEXT, `the ${what} is longer than ${MAX_PREDICTION_TEXT} characters`);

/** As the socket's commit-prediction checks question ids. */
export const exportedPredictionSchema = z.strictObject({
  questionId: z.string().min(1).max(200).regex(/^[A-Za-z0-9_/-]+$/, "question ids are letters, digits, _, - and /"),
  question: text("question"),
  choice: text("choice"),
  afterRun: z.boolean(),
  committedAt: z.iso.datetime({ offset: true, error: "not an ISO 8601 time" }),
});

/** How far ahead of this server's clock a commit time may be (another machine's clock): beyond, it is not a real time. */
const CLOCK_SKEW_MS = 5 * 60_000;

export function toExportedPrediction(stored: StoredPrediction): ExportedPrediction {
  return { questionId: stored.questionId, question: stored.question, choice: stored.choice, afterRun: stored.afterRun, committedAt: stored.committedAt.toISOString() };
}

/** Where each prediction goes in the file: on the first cell asking its question, or (none asks it) in the notebook's metadata. */
export function placePredictions(
  cells: ReadonlyArray<Pick<CellInput, "id" | "template">>,
  predictions: readonly ExportedPrediction[],
): { byCell: Map<string, ExportedPrediction>; unplaced: ExportedPrediction[] } {
  const askedBy = new Map<string, string>();
  for (const cell of cells) {
    const question = cell.template?.question;
    if (question && !askedBy.has(question.id)) askedBy.set(question.id, cell.id);
  }
  const byCell = new Map<string, ExportedPrediction>();
  const unplaced: ExportedPrediction[] = [];
  for (const prediction of predictions) {
    const cellId = askedBy.get(prediction.questionId);
    if (cellId !== undefined && !byCell.has(cellId)) byCell.set(cellId, prediction);
    else unplaced.push(prediction);
  }
  return { byCell, unplaced };
}

/** A prediction found in the file, checked for shape, with where it was. */
export interface FoundPrediction {
  where: string;
  prediction: ExportedPrediction;
}

/** The file's value at `where` as a prediction, or null with a note saying why it is left out. */
export function readPrediction(value: unknown, where: string, notes: string[]): FoundPrediction | null {
  const parsed = exportedPredictionSchema.safeParse(value);
  if (parsed.success) return { where, prediction: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = formatPath(issue.path);
  notes.push(`${where}: a committed prediction is not valid (${field ? `${field}: ` : ""}${issue.message}); it was not imported`);
  return null;
}

/**
 * The predictions to store with the imported notebook: each about a
 * question some cell of it asks, one per question (the first in the file),
 * committed no later than now. Everything else is noted and left out.
 */
export function settlePredictions(cells: readonly CellInput[], found: readonly FoundPrediction[], now: Date, notes: string[]): PredictionInput[] {
  const asked = new Set<string>();
  for (const cell of cells) if (cell.template?.question) asked.add(cell.template.question.id);
  const kept = new Map<string, PredictionInput>();
  for (const { where, prediction } of found) {
    const committedAt = new Date(prediction.committedAt);
    if (!asked.has(prediction.questionId)) {
      notes.push(`${where}: the prediction for ${prediction.questionId} was dropped: no cell of this notebook asks that question`);
    } else if (kept.has(prediction.questionId)) {
      notes.push(`${where}: a second prediction for ${prediction.questionId} was dropped; a prediction is kept as first committed`);
    } else if (committedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
      notes.push(`${where}: the prediction for ${prediction.questionId} claims to be committed in the future (${prediction.committedAt}); it was not imported`);
    } else {
      kept.set(prediction.questionId, { ...prediction, committedAt });
    }
  }
  return [...kept.values()];
}
