/**
 * The facilitator console's view, computed from facts about each
 * participant (workshop-facts.ts loads them): a roster row each, and for
 * every "predict first" question the class's predictions beside what each
 * participant's own run measured. Pure, so every number is tested without
 * a database; the class summary CSV is made from the same view.
 */
import { furthestStepRun, notebookSteps, stepTitle, type StepCell } from "../core/notebook/workshop-steps";
import { measuredChoice } from "../core/notebook/measured-choice";
import type { PredictQuestion } from "../core/protocol/notebook-model";
import { VERDICTS, type ClaimStatus, type VerdictReport, type VerdictValue } from "../core/protocol/verdict-model";
import type { ParticipantKernelState, QuestionTally, RosterRow, WorkshopBroadcast, WorkshopConsoleView, WorkshopSettings, WorkshopStep } from "../core/protocol/workshop-model";

/** One claim as a run judged it: its verdict (null: none), why not, and when. */
export interface ClaimJudgement {
  verdict: VerdictValue | null;
  status: ClaimStatus;
  /** The deciding sentence, or why there is no verdict ("experiment failed: …", the cell to run). */
  explanation: string;
  at: Date;
}

/** What a copy's runs judged so far: every claim's latest judgement, from any cell that showed one. */
export interface Judged {
  /** When the latest of them was shown. */
  at: Date;
  scenarioId: string;
  claims: Map<string, ClaimJudgement>;
}

export interface CopyFacts {
  id: string;
  title: string;
  scenarioId: string | null;
  /** When the participant last changed or ran something in it. */
  updatedAt: Date;
  /** When it was made (when they joined: making a copy is no sign they work in it); absent: unknown. */
  createdAt?: Date;
  cells: StepCell[];
  questions: PredictQuestion[];
  /** Each claim's latest judgement in this copy (an experiment cell's as it ended, or the verdicts cell's); null: none yet. */
  judged: Judged | null;
  kernel: ParticipantKernelState;
}

/**
 * The claims of verdict reports shown in one copy, each claim's latest
 * judgement kept: an experiment cell judges its own claims as it ends (a
 * "step" report), the verdicts cell judges them all, and whichever ran last
 * is what the copy now says (a later run with other values, or a failed
 * one, replaces an earlier verdict).
 */
export function judgedOf(reports: ReadonlyArray<{ at: Date; report: VerdictReport }>): Judged | null {
  if (reports.length === 0) return null;
  const ordered = [...reports].sort((a, b) => a.at.getTime() - b.at.getTime());
  const claims = new Map<string, ClaimJudgement>();
  for (const { at, report } of ordered) {
    for (const claim of report.claims) {
      claims.set(claim.id, { verdict: claim.verdict, status: claim.status ?? (claim.verdict === null ? "needs-run" : "measured"), explanation: claim.explanation, at });
    }
  }
  const latest = ordered[ordered.length - 1]!;
  return { at: latest.at, scenarioId: latest.report.scenario, claims };
}

export interface ParticipantFacts {
  id: string;
  name: string;
  joinedAt: Date;
  /** In the admission queue since then; null: admitted. */
  waitingSince: Date | null;
  online: boolean;
  /** In the workshop's scenario order. */
  copies: CopyFacts[];
  predictions: Array<{ questionId: string; choice: string }>;
  /** The copy they opened last on this server, and when (a copy just opened is the one they are on). */
  opened?: { notebookId: string; at: Date } | null;
}

export interface ConsoleFacts {
  workshop: WorkshopSettings;
  participants: ParticipantFacts[];
  broadcasts: WorkshopBroadcast[];
  now: Date;
}

export function consoleView(facts: ConsoleFacts): WorkshopConsoleView {
  const positions = queuePositions(facts.participants);
  return {
    workshop: facts.workshop,
    steps: stepsByScenario(facts),
    roster: facts.participants.map((participant) => rosterRow(participant, positions.get(participant.id) ?? null)),
    tallies: tallies(facts),
    broadcasts: facts.broadcasts,
    computedAt: facts.now.toISOString(),
  };
}

/** 1-based places in the admission queue, first come first served. */
export function queuePositions(participants: ReadonlyArray<Pick<ParticipantFacts, "id" | "waitingSince">>): Map<string, number> {
  const waiting = participants
    .filter((participant) => participant.waitingSince !== null)
    .sort((a, b) => a.waitingSince!.getTime() - b.waitingSince!.getTime() || a.id.localeCompare(b.id));
  return new Map(waiting.map((participant, index) => [participant.id, index + 1]));
}

/** Changes this close to a copy's making are its making (cells stored one by one), not the participant's. */
export const MADE_WITHIN_MS = 5_000;

/**
 * The copy a participant works in: the one they opened or changed last.
 * Every copy is made when they join (the last made looks newest), so
 * making one is not touching it: while they have touched and opened none,
 * it is the first, in the workshop's order — the one whose kernel started
 * ahead.
 */
export function currentCopy(participant: Pick<ParticipantFacts, "copies" | "opened">): CopyFacts | null {
  const opened = participant.opened ?? null;
  let current: CopyFacts | null = null;
  let currentAt = -Infinity;
  for (const copy of participant.copies) {
    const made = copy.createdAt !== undefined && copy.updatedAt.getTime() - copy.createdAt.getTime() <= MADE_WITHIN_MS;
    const at = Math.max(made ? -Infinity : copy.updatedAt.getTime(), opened?.notebookId === copy.id ? opened.at.getTime() : -Infinity);
    if (current === null || at > currentAt) {
      current = copy;
      currentAt = at;
    }
  }
  return current;
}

function rosterRow(participant: ParticipantFacts, queuePosition: number | null): RosterRow {
  const copy = queuePosition === null ? currentCopy(participant) : null;
  const steps = copy ? notebookSteps(copy.cells) : [];
  const furthest = copy ? furthestStepRun(copy.cells) : null;
  const latest = latestJudged(participant.copies);
  return {
    participantId: participant.id,
    name: participant.name,
    joinedAt: participant.joinedAt.toISOString(),
    queuePosition,
    online: participant.online,
    notebook: copy ? { id: copy.id, title: copy.title, scenarioId: copy.scenarioId } : null,
    step:
      furthest !== null
        ? { index: furthest, count: steps.length, title: steps[furthest]?.title ?? stepTitle(""), ran: true }
        : steps.length > 0
          ? { index: 0, count: steps.length, title: steps[0]!.title, ran: false }
          : null,
    kernel: queuePosition !== null ? "waiting" : (copy?.kernel ?? "not-started"),
    lastVerdict: latest === null ? null : { at: latest.at.toISOString(), scenarioId: latest.scenarioId, claims: claimVerdicts(latest), counts: verdictCounts(latest) },
    predictions: Object.fromEntries(participant.predictions.map((prediction) => [prediction.questionId, prediction.choice])),
  };
}

function latestJudged(copies: readonly CopyFacts[]): Judged | null {
  let latest: Judged | null = null;
  for (const copy of copies) if (copy.judged && (latest === null || copy.judged.at > latest.at)) latest = copy.judged;
  return latest;
}

function claimVerdicts(judged: Judged): Record<string, VerdictValue | null> {
  return Object.fromEntries([...judged.claims].map(([id, claim]) => [id, claim.verdict]));
}

function verdictCounts(judged: Judged): Record<VerdictValue, number> {
  const counts = Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as Record<VerdictValue, number>;
  for (const claim of judged.claims.values()) if (claim.verdict !== null) counts[claim.verdict] += 1;
  return counts;
}

/**
 * Why a participant's run decides nothing about a question: the first of its
 * deciding claims without a verdict says (its experiment failed, or which
 * cell to run), else the shared judgement's reason (inconclusive…).
 */
function notMeasuredReason(judged: Judged, deciding: readonly string[], fallback: string): string {
  for (const id of deciding) {
    const claim = judged.claims.get(id);
    if (claim === undefined) continue;
    if (claim.verdict === null) return claim.status === "failed" ? claim.explanation : `not measured yet: ${claim.explanation}`;
  }
  if (deciding.some((id) => !judged.claims.has(id))) return "not measured yet: its step has not run";
  return fallback;
}

/** Each scenario's steps, from the first copy of it anybody has (every copy starts from the same template). */
function stepsByScenario(facts: ConsoleFacts): Record<string, WorkshopStep[]> {
  const steps: Record<string, WorkshopStep[]> = {};
  for (const scenarioId of facts.workshop.scenarioIds) {
    const copy = facts.participants.flatMap((participant) => participant.copies).find((candidate) => candidate.scenarioId === scenarioId);
    steps[scenarioId] = copy ? notebookSteps(copy.cells) : [];
  }
  return steps;
}

/** Per question: what the class predicted, and what each participant's latest verdicts of that scenario measured. */
function tallies(facts: ConsoleFacts): QuestionTally[] {
  const questions = new Map<string, { scenarioId: string; question: PredictQuestion }>();
  for (const scenarioId of facts.workshop.scenarioIds) {
    for (const participant of facts.participants) {
      for (const copy of participant.copies) {
        if (copy.scenarioId !== scenarioId) continue;
        for (const question of copy.questions) if (!questions.has(question.id)) questions.set(question.id, { scenarioId, question });
      }
    }
  }
  return [...questions.values()].map(({ scenarioId, question }) => {
    const predicted = question.choices.map(() => 0);
    const measured = question.choices.map(() => 0);
    let undecided = 0;
    const participants: QuestionTally["participants"] = [];
    for (const participant of facts.participants) {
      const prediction = participant.predictions.find((candidate) => candidate.questionId === question.id)?.choice ?? null;
      const predictedIndex = prediction === null ? -1 : question.choices.indexOf(prediction);
      if (predictedIndex >= 0) predicted[predictedIndex]! += 1;
      const judged = latestJudged(participant.copies.filter((copy) => copy.scenarioId === scenarioId));
      // Only a run of this question's claims counts: a report of another step says nothing about it.
      const ran = judged !== null && question.claims.some((claim) => judged.claims.has(claim));
      let measuredChoiceText: string | null = null;
      let notMeasured: string | null = null;
      const verdicts: Record<string, string> = {};
      if (judged !== null && ran) {
        for (const claim of question.claims) {
          const seen = judged.claims.get(claim);
          if (seen) verdicts[claim] = seen.verdict ?? seen.status;
        }
        const outcome = measuredChoice(question.choices, question.outcomes, (claim) => judged.claims.get(claim)?.verdict ?? null);
        if (outcome.kind === "judged") {
          measuredChoiceText = outcome.measured;
          measured[question.choices.indexOf(outcome.measured)]! += 1;
        } else if (outcome.kind === "undecided") {
          undecided += 1;
          const deciding = [...new Set((question.outcomes ?? []).flatMap((choice) => Object.keys(choice)))];
          notMeasured = notMeasuredReason(judged, deciding, outcome.reason);
        }
      }
      if (prediction !== null || measuredChoiceText !== null || notMeasured !== null) {
        participants.push({ participantId: participant.id, predicted: prediction, measured: measuredChoiceText, notMeasured, verdicts });
      }
    }
    return { questionId: question.id, scenarioId, text: question.text, choices: [...question.choices], claims: [...question.claims], predicted, measured, undecided, participants };
  });
}
