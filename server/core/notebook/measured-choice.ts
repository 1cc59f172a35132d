/**
 * Which of a "predict first" question's choices a run measured: the one
 * choice whose outcome conditions the run's verdicts meet (see
 * PredictQuestion.outcomes). Shared by the verdict report beside a
 * participant's prediction and the facilitator console's class tallies, so
 * both say the same of the same run.
 */
import type { PredictQuestion } from "../protocol/notebook-model";
import type { VerdictValue } from "../protocol/verdict-model";

export type MeasuredChoice =
  /** `measured`: the choice the run's verdicts show. */
  | { kind: "judged"; measured: string }
  /** The run cannot tell: a deciding claim has no verdict, or is inconclusive, or no choice matches. */
  | { kind: "undecided"; reason: string }
  /** The question has no outcomes (stored before they existed): nothing to judge. */
  | { kind: "unjudged" };

/** `verdictOf(claimId)`: the verdict of that claim in the run's report (null: none, e.g. it needs a run). */
export function measuredChoice(
  choices: readonly string[],
  outcomes: PredictQuestion["outcomes"] | null | undefined,
  verdictOf: (claimId: string) => VerdictValue | null,
): MeasuredChoice {
  if (!outcomes || outcomes.length !== choices.length) return { kind: "unjudged" };
  const deciding = [...new Set(outcomes.flatMap((outcome) => Object.keys(outcome)))];
  if (deciding.some((claim) => verdictOf(claim) === null)) return { kind: "undecided", reason: "this run has no verdict yet on what decides it" };
  if (deciding.some((claim) => verdictOf(claim) === "inconclusive")) return { kind: "undecided", reason: "the measurement was inconclusive" };
  const index = outcomes.findIndex((outcome) => {
    const conditions = Object.entries(outcome);
    return (
      conditions.length > 0 &&
      conditions.every(([claim, verdicts]) => {
        const verdict = verdictOf(claim);
        return verdict !== null && verdicts.includes(verdict);
      })
    );
  });
  if (index < 0) return { kind: "undecided", reason: "the verdicts match none of the choices" };
  return { kind: "judged", measured: choices[index]! };
}
