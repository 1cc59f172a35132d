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
import { VERDICTS, type VerdictReport, type VerdictValue } from "../core/protocol/verdict-model";
import type { ParticipantKernelState, QuestionTally, RosterRow, WorkshopBroadcast, WorkshopConsoleView, WorkshopSettings, WorkshopStep } from "../core/protocol/workshop-model";

export interface CopyFacts {
  id: string;
  title: string;
  scenarioId: string | null;
  /** When the participant last changed or ran something in it. */
  updatedAt: Date;
  cells: StepCell[];
  questions: PredictQuestion[];
  /** The latest verdict report shown in this copy, and when. */
  verdicts: { at: Date; report: VerdictReport } | null;
  kernel: ParticipantKernelState;
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

/** The copy a participant works in: the one they changed last (the first while none was touched). */
function currentCopy(participant: ParticipantFacts): CopyFacts | null {
  let current: CopyFacts | null = null;
  for (const copy of participant.copies) if (current === null || copy.updatedAt > current.updatedAt) current = copy;
  return current;
}

function rosterRow(participant: ParticipantFacts, queuePosition: number | null): RosterRow {
  const copy = queuePosition === null ? currentCopy(participant) : null;
  const steps = copy ? notebookSteps(copy.cells) : [];
  const furthest = copy ? furthestStepRun(copy.cells) : null;
  const latest = latestVerdicts(participant.copies);
  return {
    participantId: participant.id,
    name: participant.name,
    joinedAt: participant.joinedAt.toISOString(),
    queuePosition,
    online: participant.online,
    notebook: copy ? { id: copy.id, title: copy.title, scenarioId: copy.scenarioId } : null,
    step: furthest === null ? null : { index: furthest, count: steps.length, title: steps[furthest]?.title ?? stepTitle("") },
    kernel: queuePosition !== null ? "waiting" : (copy?.kernel ?? "not-started"),
    lastVerdict: latest === null ? null : { at: latest.at.toISOString(), scenarioId: latest.report.scenario, claims: claimVerdicts(latest.report), counts: verdictCounts(latest.report) },
    predictions: Object.fromEntries(participant.predictions.map((prediction) => [prediction.questionId, prediction.choice])),
  };
}

function latestVerdicts(copies: readonly CopyFacts[]): { at: Date; report: VerdictReport } | null {
  let latest: { at: Date; report: VerdictReport } | null = null;
  for (const copy of copies) if (copy.verdicts && (latest === null || copy.verdicts.at > latest.at)) latest = copy.verdicts;
  return latest;
}

function claimVerdicts(report: VerdictReport): Record<string, VerdictValue | null> {
  return Object.fromEntries(report.claims.map((claim) => [claim.id, claim.verdict]));
}

function verdictCounts(report: VerdictReport): Record<VerdictValue, number> {
  const counts = Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as Record<VerdictValue, number>;
  for (const claim of report.claims) if (claim.verdict !== null) counts[claim.verdict] += 1;
  return counts;
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
      const report = latestVerdicts(participant.copies.filter((copy) => copy.scenarioId === scenarioId))?.report ?? null;
      let measuredChoiceText: string | null = null;
      if (report !== null) {
        const verdicts = claimVerdicts(report);
        const outcome = measuredChoice(question.choices, question.outcomes, (claim) => verdicts[claim] ?? null);
        if (outcome.kind === "judged") {
          measuredChoiceText = outcome.measured;
          measured[question.choices.indexOf(outcome.measured)]! += 1;
        } else if (outcome.kind === "undecided") undecided += 1;
      }
      if (prediction !== null || measuredChoiceText !== null) participants.push({ participantId: participant.id, predicted: prediction, measured: measuredChoiceText });
    }
    return { questionId: question.id, scenarioId, text: question.text, choices: [...question.choices], claims: [...question.claims], predicted, measured, undecided, participants };
  });
}
