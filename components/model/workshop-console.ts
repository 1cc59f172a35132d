/**
 * The facilitator console of one workshop (/workshops/<id>): the view the
 * server computes (`workshop-console`, then pushed as `workshop:console` on
 * every change), the room's settings, restarting a participant's kernel and
 * broadcasting to the class. Every number on the page is the server's; what
 * each part says is computed here by pure functions (consoleHeader,
 * rosterCard, tallyCard, parsePreset…), so the component only renders and
 * the words are tested without a browser.
 */
import type { ParameterValue } from "../../server/core/protocol/notebook-model";
import type { LabRequest } from "../../server/core/protocol/ops-lab";
import type { Refusal } from "../../server/core/protocol/op-table";
import { VERDICTS, type VerdictValue } from "../../server/core/protocol/verdict-model";
import type { ParticipantKernelState, QuestionTally, RosterRow, WorkshopConsoleView, WorkshopPace, WorkshopSettings } from "../../server/core/protocol/workshop-model";
import type { LiveLabTransport } from "./lab-client";
import { capacityProblem, joinUrl } from "./workshops";

export interface WorkshopConsoleState {
  /** "not-found": no such workshop, or another facilitator's (the server says the same for both). */
  status: "loading" | "ready" | "not-found" | "error";
  view: WorkshopConsoleView | null;
  /** The server's words for the last refusal, until dismissed or the next success. */
  error: string | null;
  /** A change to the workshop is out: its controls wait for the answer. */
  busy: boolean;
  /** "End workshop now" was pressed once and waits for its confirmation. */
  confirmingEnd: boolean;
  /** Notebooks whose kernel restart was asked and not answered yet. */
  restarting: readonly string[];
  /** Broadcasts this page sent (the form clears after each). */
  sent: number;
  /** Scenario id → title, once listed (ids stand in for titles until then). */
  scenarioTitles: Readonly<Record<string, string>>;
}

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

/** The newer of two views (by the time the server computed them): a late answer never replaces a fresher push. */
export function newerView(current: WorkshopConsoleView | null, incoming: WorkshopConsoleView): WorkshopConsoleView {
  if (current === null) return incoming;
  return Date.parse(incoming.computedAt) >= Date.parse(current.computedAt) ? incoming : current;
}

/** Why this capacity cannot be sent, or null: the same rule as the creation form's. */
export { capacityProblem };

const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const MAX_PRESET_VALUES = 64;
const MAX_PRESET_STRING = 200;

/**
 * "name=value" lines as a scenario form's values: numbers, true/false, and
 * anything else as text (quotes keep a number or a boolean as text: name="4").
 * Blank lines and lines starting with # are skipped.
 */
export function parsePreset(text: string): { ok: true; values: Record<string, ParameterValue> } | { ok: false; error: string } {
  const values: Record<string, ParameterValue> = {};
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    if (at < 0) return { ok: false, error: `line ${index + 1}: write name=value` };
    const name = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    if (!PARAMETER_NAME.test(name)) return { ok: false, error: `line ${index + 1}: "${name}" is not a parameter name (letters, digits and _, not starting with a digit)` };
    if (Object.hasOwn(values, name)) return { ok: false, error: `line ${index + 1}: ${name} is set twice` };
    const typed = typedValue(value);
    if (typeof typed === "string" && typed.length > MAX_PRESET_STRING) return { ok: false, error: `line ${index + 1}: a text value has at most ${MAX_PRESET_STRING} characters` };
    values[name] = typed;
  }
  if (Object.keys(values).length > MAX_PRESET_VALUES) return { ok: false, error: `a preset sets at most ${MAX_PRESET_VALUES} parameters` };
  return { ok: true, values };
}

function typedValue(text: string): ParameterValue {
  if (text === "true") return true;
  if (text === "false") return false;
  if (NUMBER.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  const quoted = /^"(.*)"$/.exec(text) ?? /^'(.*)'$/.exec(text);
  return quoted ? quoted[1]! : text;
}

/** The broadcast form as typed: `scenarioId` "" for no preset. */
export interface BroadcastDraft {
  message: string;
  scenarioId: string;
  preset: string;
}

/** The command the form sends, or why it cannot be sent. */
export function broadcastCommand(workshopId: string, draft: BroadcastDraft): { ok: true; command: LabRequest<"workshop-broadcast"> } | { ok: false; error: string } {
  const message = draft.message.trim();
  const hasPreset = draft.preset.trim() !== "";
  if (draft.scenarioId === "" && hasPreset) return { ok: false, error: "pick the scenario the preset is for" };
  let preset: { scenarioId: string; values: Record<string, ParameterValue> } | undefined;
  if (draft.scenarioId !== "") {
    const parsed = parsePreset(draft.preset);
    if (!parsed.ok) return parsed;
    if (Object.keys(parsed.values).length === 0) return { ok: false, error: "a preset needs at least one name=value line" };
    preset = { scenarioId: draft.scenarioId, values: parsed.values };
  }
  if (message === "" && preset === undefined) return { ok: false, error: "write a message or a preset" };
  if (message.length > 2_000) return { ok: false, error: "a message has at most 2000 characters" };
  return { ok: true, command: { op: "workshop-broadcast", workshopId, ...(message === "" ? {} : { message }), ...(preset ? { preset } : {}) } };
}

/** A preset in one line: "dp-basics: devices=2, compare_ddp=false". */
export function presetText(preset: { scenarioId: string; values: Record<string, ParameterValue> }): string {
  return `${preset.scenarioId}: ${Object.entries(preset.values)
    .map(([name, value]) => `${name}=${typeof value === "string" ? JSON.stringify(value) : String(value)}`)
    .join(", ")}`;
}

type WorkshopChange = Omit<LabRequest<"update-workshop">, "op" | "workshopId">;

export class WorkshopConsoleController {
  private state: WorkshopConsoleState = { status: "loading", view: null, error: null, busy: false, confirmingEnd: false, restarting: [], sent: 0, scenarioTitles: {} };
  private readonly listeners = new Set<() => void>();
  private unfollow: (() => void) | null = null;
  private seq = 0;

  constructor(
    readonly workshopId: string,
    private readonly transport: LiveLabTransport,
  ) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): WorkshopConsoleState => this.state;

  /** Follows the pushed views, and asks for the view (which subscribes this connection) now and after every reconnect. */
  start(): void {
    this.unfollow = this.transport.on("workshop:console", (workshopId, view) => {
      if (workshopId === this.workshopId) this.receive(view);
    });
    this.transport.onConnect(() => void this.load());
    void this.load();
    void this.loadScenarioTitles();
  }

  /** Titles for the scenario picker of presets; without them the ids are shown, so a refusal here is not an error. */
  async loadScenarioTitles(): Promise<void> {
    const ack = await this.transport.send({ op: "list-scenarios" });
    if (ack.ok) this.update({ scenarioTitles: Object.fromEntries(ack.scenarios.map((scenario) => [scenario.id, scenario.title])) });
  }

  stop(): void {
    this.unfollow?.();
    this.unfollow = null;
    this.transport.close();
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    const ack = await this.transport.send({ op: "workshop-console", workshopId: this.workshopId });
    if (seq !== this.seq) return;
    if (ack.ok) {
      this.receive(ack.console);
      return;
    }
    if (ack.code === "not-found") {
      this.update({ status: "not-found", view: null, error: ack.error });
      return;
    }
    this.update({ status: this.state.view === null ? "error" : "ready", error: refusal("Loading the workshop", ack) });
  }

  /** A view pushed by the server or answered to a command. */
  receive(view: WorkshopConsoleView): void {
    const next = newerView(this.state.view, view);
    const wasError = this.state.status === "error";
    this.update({ status: "ready", view: next, ...(wasError ? { error: null } : {}) });
  }

  setClosed(closed: boolean): Promise<boolean> {
    return this.change({ closed }, closed ? "Closing the room" : "Reopening the room");
  }

  setCapacity(text: string): Promise<boolean> {
    const problem = capacityProblem(text);
    if (problem !== null) {
      this.update({ error: `Changing the capacity failed: ${problem}` });
      return Promise.resolve(false);
    }
    return this.change({ capacity: Number(text.trim()) }, "Changing the capacity");
  }

  setPace(pace: WorkshopPace): Promise<boolean> {
    return this.change({ pace }, "Changing the pace");
  }

  revealNextStep(): Promise<boolean> {
    const view = this.state.view;
    if (view === null) return Promise.resolve(false);
    return this.change({ revealedSteps: view.workshop.revealedSteps + 1 }, "Revealing the next step");
  }

  askEnd(): void {
    this.update({ confirmingEnd: true });
  }

  cancelEnd(): void {
    this.update({ confirmingEnd: false });
  }

  /** Ends the workshop now (asked twice: its kernels shut down and the copies turn read-only). */
  async endNow(): Promise<boolean> {
    if (!this.state.confirmingEnd) {
      this.askEnd();
      return false;
    }
    this.update({ confirmingEnd: false });
    return this.change({ end: true }, "Ending the workshop");
  }

  async broadcast(draft: BroadcastDraft): Promise<boolean> {
    const built = broadcastCommand(this.workshopId, draft);
    if (!built.ok) {
      this.update({ error: `Broadcasting failed: ${built.error}` });
      return false;
    }
    this.update({ busy: true, error: null });
    const ack = await this.transport.send(built.command);
    this.update({ busy: false });
    if (!ack.ok) {
      this.update({ error: refusal("Broadcasting", ack) });
      return false;
    }
    // The broadcast list follows from the server's push.
    this.update({ sent: this.state.sent + 1 });
    return true;
  }

  async restartKernel(notebookId: string): Promise<boolean> {
    if (this.state.restarting.includes(notebookId)) return false;
    this.update({ restarting: [...this.state.restarting, notebookId], error: null });
    const ack = await this.transport.send({ op: "restart-kernel", notebookId });
    this.update({ restarting: this.state.restarting.filter((id) => id !== notebookId) });
    if (!ack.ok) {
      this.update({ error: refusal("Restarting the kernel", ack) });
      return false;
    }
    return true;
  }

  dismissError(): void {
    if (this.state.error !== null) this.update({ error: null });
  }

  private async change(changes: WorkshopChange, what: string): Promise<boolean> {
    if (this.state.busy) return false;
    this.update({ busy: true, error: null });
    const ack = await this.transport.send({ op: "update-workshop", workshopId: this.workshopId, ...changes });
    this.update({ busy: false });
    if (!ack.ok) {
      this.update({ error: refusal(what, ack) });
      return false;
    }
    this.receive(ack.console);
    return true;
  }

  private update(patch: Partial<WorkshopConsoleState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }
}

function refusal(what: string, refused: Refusal): string {
  return `${what} failed: ${refused.error}`;
}
