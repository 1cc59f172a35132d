/**
 * What each part of the facilitator console says, from the view the server
 * computed: the header (room, times, pace, reveal), a roster card per
 * participant, a tally card per question. Pure functions, apart from the
 * console's controller, so the words are tested without a browser or a socket.
 */
import { VERDICTS, type VerdictValue } from "../../../server/core/protocol/verdict-model";
import type { ParticipantKernelState, QuestionTally, RosterRow, WorkshopConsoleView, WorkshopPace, WorkshopSettings } from "../../../server/core/protocol/workshop-model";
import { joinUrl } from "./workshops";

/** The room, as one word. */
export type RoomState = "open" | "closed" | "ended";

export function roomState(settings: Pick<WorkshopSettings, "closedAt" | "endedAt">): RoomState {
  if (settings.endedAt !== null) return "ended";
  return settings.closedAt !== null ? "closed" : "open";
}

/** The most steps any of the workshop's scenarios has (0 while nobody has a copy to count them from). */
export function stepCount(view: Pick<WorkshopConsoleView, "steps">): number {
  return Math.max(0, ...Object.values(view.steps).map((steps) => steps.length));
}

/** What participants see of the steps: "every step (self-paced)" or "step 2 of 6 revealed". */
export function revealText(settings: Pick<WorkshopSettings, "pace" | "revealedSteps">, count: number): string {
  if (settings.pace === "self") return "self-paced: every step is open";
  if (count === 0) return `${settings.revealedSteps} step${settings.revealedSteps === 1 ? "" : "s"} revealed`;
  return `step ${Math.min(settings.revealedSteps, count)} of ${count} revealed`;
}

/** "26 Nov 2026, 09:00" in the viewer's zone (or `timeZone`). */
export function formatWhen(iso: string, timeZone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", ...(timeZone ? { timeZone } : {}) }).format(date);
}

export interface ConsoleHeader {
  title: string;
  joinCode: string;
  joinUrl: string;
  state: RoomState;
  /** "starts 26 Nov 2026, 09:00" / "started when created"; "ends …" / "no end time (end it here)". */
  starts: string;
  ends: string;
  resources: string;
  pace: WorkshopPace;
  capacity: number;
  reveal: string;
  /** Led pace, not ended, and a step left to reveal (or steps not known yet). */
  canRevealNext: boolean;
  /** Where the class summary downloads from (same-origin, the facilitator's cookie). */
  summaryHref: string;
  scenarioIds: string[];
  admitted: number;
  waiting: number;
  /** Whether the lab holds the plan, and what to change. */
  sizing: WorkshopConsoleView["workshop"]["sizing"];
}

export function consoleHeader(view: WorkshopConsoleView, origin: string, summaryHref: string, timeZone?: string): ConsoleHeader {
  const { workshop } = view;
  const count = stepCount(view);
  const state = roomState(workshop);
  const waiting = view.roster.filter((row) => row.queuePosition !== null).length;
  return {
    title: workshop.title,
    joinCode: workshop.joinCode,
    joinUrl: joinUrl(origin, workshop.joinCode),
    state,
    starts: workshop.startsAt === null ? "started when created" : `starts ${formatWhen(workshop.startsAt, timeZone)}`,
    ends:
      workshop.endedAt !== null
        ? `ended ${formatWhen(workshop.endedAt, timeZone)}`
        : workshop.endsAt === null
          ? "no end time (end it here)"
          : `ends ${formatWhen(workshop.endsAt, timeZone)}`,
    resources: workshop.resources,
    pace: workshop.pace,
    capacity: workshop.plan.capacity,
    reveal: revealText(workshop, count),
    canRevealNext: state !== "ended" && workshop.pace === "led" && (count === 0 || workshop.revealedSteps < count),
    summaryHref,
    scenarioIds: [...workshop.scenarioIds],
    admitted: view.roster.length - waiting,
    waiting,
    sizing: workshop.sizing,
  };
}

/** How a kernel state reads on the roster, and its colour. */
export type KernelTone = "ok" | "busy" | "bad" | "none";

export function kernelLook(state: ParticipantKernelState): { label: string; tone: KernelTone } {
  switch (state) {
    case "idle":
      return { label: "idle", tone: "ok" };
    case "busy":
      return { label: "busy", tone: "busy" };
    case "starting":
      return { label: "starting", tone: "busy" };
    case "hung":
      return { label: "hung", tone: "bad" };
    case "dead":
      return { label: "dead", tone: "bad" };
    case "shutdown":
      return { label: "shut down", tone: "none" };
    case "waiting":
      return { label: "waiting for a place", tone: "none" };
    case "not-started":
      return { label: "not started", tone: "none" };
  }
}

const VERDICT_WORDS: Record<VerdictValue, string> = { holds: "holds", "does-not-hold": "does not hold", partly: "partly", inconclusive: "inconclusive" };

export interface RosterCard {
  participantId: string;
  name: string;
  online: boolean;
  /** "waiting: 2nd in the queue", or null once admitted. */
  queue: string | null;
  notebook: { id: string; title: string; href: string } | null;
  /** "step 2 of 6: Equivalence (ran)", "step 1 of 6: Split (not run yet)", "no step run yet", or null without a notebook. */
  step: string | null;
  kernel: ParticipantKernelState;
  kernelLabel: string;
  kernelTone: KernelTone;
  /** Each verdict's count in the latest report (zeros left out), or null before any. */
  verdicts: Array<{ verdict: VerdictValue; count: number; words: string }> | null;
  predictions: number;
  /** A notebook to restart the kernel of, and a kernel worth restarting. */
  canRestart: boolean;
}

export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : n % 10 === 1 ? "st" : n % 10 === 2 ? "nd" : n % 10 === 3 ? "rd" : "th";
  return `${n}${suffix}`;
}

export function rosterCard(row: RosterRow, ended = false): RosterCard {
  const look = kernelLook(row.kernel);
  const last = row.lastVerdict;
  const verdicts = last === null ? null : VERDICTS.map((verdict) => ({ verdict, count: last.counts[verdict] ?? 0, words: VERDICT_WORDS[verdict] })).filter((entry) => entry.count > 0);
  return {
    participantId: row.participantId,
    name: row.name,
    online: row.online,
    queue: row.queuePosition === null ? null : `waiting: ${ordinal(row.queuePosition)} in the queue`,
    notebook: row.notebook === null ? null : { id: row.notebook.id, title: row.notebook.title, href: `/notebooks/${encodeURIComponent(row.notebook.id)}?peek=1` },
    step:
      row.notebook === null
        ? null
        : row.step === null
          ? "no step run yet"
          : `step ${row.step.index + 1} of ${row.step.count}: ${row.step.title}${row.step.ran === false ? " (not run yet)" : row.step.ran ? " (ran)" : ""}`,
    kernel: row.kernel,
    kernelLabel: look.label,
    kernelTone: look.tone,
    verdicts,
    predictions: Object.keys(row.predictions).length,
    canRestart: !ended && row.notebook !== null && row.kernel !== "waiting",
  };
}

export interface TallyBar {
  choice: string;
  predicted: number;
  measured: number;
  /** Bar lengths in percent of the longest bar of this question (0–100). */
  predictedWidth: number;
  measuredWidth: number;
}

export interface TallyCard {
  questionId: string;
  scenarioId: string;
  text: string;
  bars: TallyBar[];
  undecided: number;
  /** Participants who committed a prediction to this question. */
  predictedTotal: number;
  measuredTotal: number;
}

export function tallyCard(tally: QuestionTally): TallyCard {
  const longest = Math.max(1, ...tally.predicted, ...tally.measured);
  const width = (count: number) => Math.round((count / longest) * 100);
  return {
    questionId: tally.questionId,
    scenarioId: tally.scenarioId,
    text: tally.text,
    bars: tally.choices.map((choice, index) => {
      const predicted = tally.predicted[index] ?? 0;
      const measured = tally.measured[index] ?? 0;
      return { choice, predicted, measured, predictedWidth: width(predicted), measuredWidth: width(measured) };
    }),
    undecided: tally.undecided,
    predictedTotal: tally.predicted.reduce((sum, n) => sum + n, 0),
    measuredTotal: tally.measured.reduce((sum, n) => sum + n, 0),
  };
}
