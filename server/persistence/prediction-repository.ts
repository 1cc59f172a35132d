/**
 * Predictions: a participant commits to an answer before the experiment runs;
 * the answer is kept as committed (never edited) so it can be set beside the
 * measured verdict honestly.
 */
import type { PrismaClient } from "./generated/client";
import { AlreadyExistsError, InvalidDataError, NotFoundError } from "./errors";
import type { StoredPrediction } from "./types";

const MAX_TEXT = 2_000;
const select = { questionId: true, userId: true, question: true, choice: true, afterRun: true, committedAt: true } as const;

export class PredictionAlreadyCommittedError extends AlreadyExistsError {}

export class PredictionRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stores the first commitment; a second one for the same question and user is refused. */
  async commit(notebookId: string, userId: string, input: { questionId: string; question: string; choice: string; afterRun?: boolean }): Promise<StoredPrediction> {
    const { afterRun = false, ...texts } = input;
    for (const [what, text] of Object.entries(texts)) {
      if (typeof text !== "string" || text.length === 0 || text.length > MAX_TEXT) throw new InvalidDataError(`a prediction's ${what} has 1–${MAX_TEXT} characters`);
    }
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
