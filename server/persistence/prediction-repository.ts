/**
 * Predictions: a participant commits to an answer before the experiment runs;
 * the answer is kept as committed (never edited) so it can be set beside the
 * measured verdict honestly.
 */
import type { PrismaClient } from "./generated/client";
import { AlreadyExistsError, InvalidDataError, NotFoundError } from "./errors";
import type { StoredPrediction } from "./types";

/** Characters in a prediction's question or choice. */
export const MAX_PREDICTION_TEXT = 2_000;
const MAX_TEXT = MAX_PREDICTION_TEXT;
const select = { questionId: true, userId: true, question: true, choice: true, afterRun: true, committedAt: true } as const;

export class PredictionAlreadyCommittedError extends AlreadyExistsError {}

export class PredictionRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stores the first commitment; a second one for the same question and user is refused. */
  async commit(notebookId: string, userId: string, input: { questionId: string; question: string; choice: string; afterRun?: boolean }): Promise<StoredPrediction> {
    const { afterRun = false, ...texts } = input;
    checkPredictionTexts(texts);
    const notebook = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { deletedAt: true } });
    if (!notebook || notebook.deletedAt) throw new NotFoundError("notebook", notebookId);
    const existing = await this.prisma.prediction.findUnique({ where: { notebookId_questionId_userId: { notebookId, questionId: input.questionId, userId } }, select });
    if (existing) throw new PredictionAlreadyCommittedError(`a prediction for ${input.questionId} was already committed (${existing.choice}); predictions are kept as committed`);
    return this.prisma.prediction.create({ data: { notebookId, userId, ...texts, afterRun }, select });
  }

  list(notebookId: string, userId: string): Promise<StoredPrediction[]> {
    return this.prisma.prediction.findMany({ where: { notebookId, userId }, select, orderBy: { committedAt: "asc" } });
  }
}

/** A prediction carried over as it was committed elsewhere (an imported notebook): its time is kept. */
export interface PredictionInput {
  questionId: string;
  question: string;
  choice: string;
  afterRun: boolean;
  committedAt: Date;
}

export function checkPredictionTexts(texts: { questionId: string; question: string; choice: string }): void {
  for (const [what, text] of Object.entries(texts)) {
    if (typeof text !== "string" || text.length === 0 || text.length > MAX_TEXT) throw new InvalidDataError(`a prediction's ${what} has 1–${MAX_TEXT} characters`);
  }
}

/** Checks predictions to be stored as committed: texts, a real time, one per question. */
export function checkPredictionInputs(predictions: readonly PredictionInput[]): void {
  const seen = new Set<string>();
  for (const { questionId, question, choice, afterRun, committedAt } of predictions) {
    checkPredictionTexts({ questionId, question, choice });
    if (typeof afterRun !== "boolean") throw new InvalidDataError(`the prediction for ${questionId}: afterRun must be a boolean`);
    if (!(committedAt instanceof Date) || Number.isNaN(committedAt.getTime())) throw new InvalidDataError(`the prediction for ${questionId} has no valid commit time`);
    if (seen.has(questionId)) throw new InvalidDataError(`two predictions for ${questionId}; predictions are kept as first committed`);
    seen.add(questionId);
  }
}
