/**
 * Workshops as the facilitator console and the participants' pages see
 * them: the shapes of the workshop lab commands' answers and of the live
 * `workshop:*` socket events (socket-api.ts). Pure types; the server
 * computes every field (server/workshops/), the pages only render.
 */
import type { ParameterValue } from "./notebook-model";
import type { VerdictValue } from "./verdict-model";

/** "led": participants see the steps the facilitator has revealed; "self": every step, at their own pace. */
export const WORKSHOP_PACES = ["self", "led"] as const;
export type WorkshopPace = (typeof WORKSHOP_PACES)[number];

/** Where participants' kernels run and how many may be in at once. */
export interface WorkshopPlan {
  /** A configured host's id; null: the lab's default host. */
  hostId: string | null;
  /** GPUs leased to each participant's kernel on that host (0: CPU emulation). */
  gpusPerParticipant: number;
  /** Participants admitted at once; later arrivals wait in the admission queue. */
  capacity: number;
}

/**
 * Whether the lab can hold a workshop's plan (its facilitator's eyes only): `fits`, `tight` (it holds the
 * class, with limits named in `details`), or `does-not-fit`; `advice` says what to change.
 */
export interface WorkshopSizing {
  verdict: "fits" | "tight" | "does-not-fit";
  summary: string;
  details: string[];
  advice: string[];
}

/** What a workshop is, as its facilitator set it up. */
export interface WorkshopSettings {
  id: string;
  title: string;
  joinCode: string;
  scenarioIds: string[];
  /** ISO times; null: no time set (starts now, ends when the facilitator ends it). */
  startsAt: string | null;
  endsAt: string | null;
  /** Closed to new joiners (people already in may come back). */
  closedAt: string | null;
  /** Ended: kernels shut down, GPU slots freed, notebooks read-only. */
  endedAt: string | null;
  pace: WorkshopPace;
  /** With pace "led": how many steps of each scenario participants see (at least 1). */
  revealedSteps: number;
  plan: WorkshopPlan;
  /** Honest words for the resources: "1 GPU each on gpu-a (8 free now)" or "CPU emulation (no GPU per participant)". */
  resources: string;
  /** Whether the lab can hold this plan, and what to change (never sent to participants). */
  sizing: WorkshopSizing;
}

/** A message or parameter preset from the facilitator to everyone. */
export interface WorkshopBroadcast {
  id: string;
  /** ISO time */
  at: string;
  message: string | null;
  /** Values for a scenario's form: the participant sees them and chooses to apply them. */
  preset: { scenarioId: string; values: Record<string, ParameterValue> } | null;
}

/** A participant's kernel, as the roster shows it: "hung" is busy with a hang report on its running cell. */
export const PARTICIPANT_KERNEL_STATES = ["not-started", "waiting", "starting", "idle", "busy", "hung", "dead", "shutdown"] as const;
export type ParticipantKernelState = (typeof PARTICIPANT_KERNEL_STATES)[number];

/** One step of a scenario: a templated code cell (an experiment, or the verdicts). */
export interface WorkshopStep {
  /** The template id, "<scenario>/<cell>". */
  id: string;
  title: string;
}

export interface RosterRow {
  participantId: string;
  name: string;
  /** ISO time they first joined. */
  joinedAt: string;
  /** null: admitted; a number: their 1-based place in the admission queue. */
  queuePosition: number | null;
  /** A tab of theirs is connected now. */
  online: boolean;
  /** The copy they worked in last (null while waiting). */
  notebook: { id: string; title: string; scenarioId: string | null } | null;
  /**
   * The step they are on in that copy (index 0-based), of `count`: the furthest they ran (`ran`), or the
   * first while they have run none (`ran: false`); null without steps.
   */
  step: { index: number; count: number; title: string; ran?: boolean } | null;
  kernel: ParticipantKernelState;
  /** Their latest verdict report: when, and each claim's verdict (null: none, e.g. needs a run). */
  lastVerdict: { at: string; scenarioId: string; claims: Record<string, VerdictValue | null>; counts: Record<VerdictValue, number> } | null;
  /** Committed predictions: question id → choice. */
  predictions: Record<string, string>;
}

/** One "predict first" question across the class: what people predicted beside what their runs measured. */
export interface QuestionTally {
  questionId: string;
  scenarioId: string;
  text: string;
  choices: string[];
  /** The claims the question is about. */
  claims: string[];
  /** Parallel to `choices`: how many predicted each. */
  predicted: number[];
  /** Parallel to `choices`: how many participants' own runs measured each. */
  measured: number[];
  /** Participants with a verdict report that cannot decide this question (inconclusive, or a claim not measured). */
  undecided: number;
  /**
   * Each participant who predicted, measured or ran the step: their prediction, their measurement, and when
   * their run decides nothing, why (`notMeasured`: "experiment failed: …", the cell to run, inconclusive);
   * `verdicts`: the verdict (or status) of each of the question's claims in their copy.
   */
  participants: Array<{ participantId: string; predicted: string | null; measured: string | null; notMeasured: string | null; verdicts: Record<string, string> }>;
}

/** Everything the facilitator console shows, recomputed on every change and pushed live. */
export interface WorkshopConsoleView {
  workshop: WorkshopSettings;
  /** Step titles per scenario id, in order (what "reveal the next step" reveals). */
  steps: Record<string, WorkshopStep[]>;
  roster: RosterRow[];
  tallies: QuestionTally[];
  /** Newest last. */
  broadcasts: WorkshopBroadcast[];
  /** ISO time this view was computed: the console's update latency is measured against it. */
  computedAt: string;
}

/** What a participant's own pages show of their workshop. */
export interface ParticipantWorkshopView {
  id: string;
  title: string;
  /** "waiting": in the admission queue at `queuePosition`; "ended": read-only from now on. */
  state: "waiting" | "admitted" | "ended";
  queuePosition: number | null;
  /** While waiting: why, in plain words ("all 30 places are taken"); null otherwise. */
  waitingBecause: string | null;
  startsAt: string | null;
  endsAt: string | null;
  pace: WorkshopPace;
  revealedSteps: number;
  resources: string;
  /** Newest last. */
  broadcasts: WorkshopBroadcast[];
}
