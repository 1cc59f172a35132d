/**
 * Committed "predict first" answers, indexed by the claims they are about,
 * so the verdict report can show each one beside the measured verdict. The
 * notebook builds the map from its cells and predictions and provides it
 * through `PredictionsContext`; the verdict report (deep inside an output)
 * only reads it.
 */
import { createContext } from "react";
import type { CellTemplate, Prediction, PredictQuestion } from "../../../server/core/protocol/notebook-model";
import type { VerdictValue } from "../../../server/core/protocol/verdict-model";
import { measuredChoice } from "../../../server/core/notebook/measured-choice";

export interface ClaimPrediction {
  /** The question as it was asked (filled in with the scenario's values). */
  question: string;
  choice: string;
  /** ISO 8601 */
  committedAt: string;
  /** Given after the experiment had run: not a blind prediction, and labelled so. */
  afterRun: boolean;
  /** The question's choices and when each is what a run measured (see PredictQuestion.outcomes). */
  choices: readonly string[];
  outcomes: PredictQuestion["outcomes"] | null;
}

/**
 * A prediction set against a run's verdicts: `judged` names the choice the
 * run measured and whether the prediction was it; `undecided` says why the
 * run cannot tell (a deciding claim has no verdict, or is inconclusive).
 */
export type PredictionOutcome =
  | { kind: "judged"; measured: string; right: boolean }
  | { kind: "undecided"; reason: string }
  | { kind: "unjudged" };

/** `verdictOf(claimId)`: the verdict of that claim in the report shown (null: none, e.g. it needs a run). */
export function judgePrediction(prediction: ClaimPrediction, verdictOf: (claimId: string) => VerdictValue | null): PredictionOutcome {
  const measured = measuredChoice(prediction.choices, prediction.outcomes, verdictOf);
  if (measured.kind !== "judged") return measured;
  return { kind: "judged", measured: measured.measured, right: measured.measured === prediction.choice };
}

export type PredictionsByClaim = ReadonlyMap<string, readonly ClaimPrediction[]>;

const NO_PREDICTIONS: PredictionsByClaim = new Map();

export const PredictionsContext = createContext<PredictionsByClaim>(NO_PREDICTIONS);

/** Claims some "predict first" question of the notebook is about (null: not known, e.g. outside a notebook). */
export const AskedClaimsContext = createContext<ReadonlySet<string> | null>(null);

/** The claims the notebook's questions are about (only those get a prediction box beside their verdict). */
export function askedClaims(cells: ReadonlyArray<{ template: CellTemplate | null }>): Set<string> {
  const asked = new Set<string>();
  for (const cell of cells) for (const claim of cell.template?.question?.claims ?? []) asked.add(claim);
  return asked;
}

/**
 * Claim id → the committed predictions about it, in notebook order. A
 * question carried by several cells counts once; a prediction whose
 * question no cell asks any more is left out (nothing says what it was about).
 */
export function predictionsByClaim(
  cells: ReadonlyArray<{ template: CellTemplate | null }>,
  predictions: Readonly<Record<string, Prediction>>,
): Map<string, ClaimPrediction[]> {
  const byClaim = new Map<string, ClaimPrediction[]>();
  const seen = new Set<string>();
  for (const cell of cells) {
    const question = cell.template?.question ?? null;
    if (question === null || seen.has(question.id)) continue;
    seen.add(question.id);
    const prediction = Object.hasOwn(predictions, question.id) ? predictions[question.id] : undefined;
    if (prediction === undefined) continue;
    for (const claim of question.claims) {
      const list = byClaim.get(claim) ?? [];
      list.push({
        question: question.text,
        choice: prediction.choice,
        committedAt: prediction.committedAt,
        afterRun: prediction.afterRun,
        choices: question.choices,
        outcomes: question.outcomes ?? null,
      });
      byClaim.set(claim, list);
    }
  }
  return byClaim;
}

/** When a prediction was committed, for people: "Jun 1, 2025, 12:00 PM" in their locale, or "an unknown time". */
export function formatCommittedAt(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return "an unknown time";
  return new Date(time).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
