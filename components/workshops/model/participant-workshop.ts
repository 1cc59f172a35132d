/**
 * A participant's own side of their workshop: where they stand (in the
 * admission queue, admitted, or after the end), the facilitator's
 * broadcasts, and which steps of a led workshop their notebook shows.
 *
 * The controller asks `whoami` once, then `my-workshop`, and follows the
 * server's `workshop:participant` pushes (asking again after each
 * reconnect), over a socket of its own. Everything the pages decide from
 * that is a pure function below; the server decides every permission and
 * the pages only leave out what it would refuse.
 */
import type { Me } from "../../../server/core/protocol/accounts-model";
import type { Cell, ParameterValue } from "../../../server/core/protocol/notebook-model";
import type { NotebookCommand } from "../../../server/core/protocol/socket-api";
import type { ParticipantWorkshopView, WorkshopBroadcast } from "../../../server/core/protocol/workshop-model";
import { hiddenCells, notebookSteps } from "../../../server/core/notebook/workshop-steps";
import type { LiveLabTransport } from "../../shell/model/lab-client";
import { ViewStore } from "../../shell/model/view-store";

export type ParticipantWorkshopState = {
  /** Ids of broadcasts this participant dismissed or applied (in this browser). */
  handled: ReadonlySet<string>;
} & (
  | { status: "loading" }
  /** Not a participant (or the server says they are in no workshop): nothing to show. */
  | { status: "none" }
  | { status: "error"; error: string }
  | { status: "ready"; view: ParticipantWorkshopView }
);

/** Where handled broadcast ids are remembered: localStorage in the app (shell's browserStorage), null where the browser refuses it. */
export type BroadcastStorage = Pick<Storage, "getItem" | "setItem">;

export interface ParticipantWorkshopOptions {
  /** The view turned "admitted": the notebook list reloads to show the copies just made. */
  onAdmitted?: () => void;
  storage?: BroadcastStorage | null;
}

export class ParticipantWorkshopController {
  private readonly store = new ViewStore<ParticipantWorkshopState>({ status: "loading", handled: new Set() });
  readonly subscribe = this.store.subscribe;
  readonly getState = this.store.getState;
  private transport: LiveLabTransport | null = null;
  private me: Me | null = null;
  /** Asks in flight are answered in order; only the newest one's answer counts. */
  private seq = 0;
  /** Pushes received: a `my-workshop` answer asked before the latest push may be older than it, and is dropped. */
  private pushes = 0;

  constructor(
    /** A connection of its own (SocketLabTransport in the app): it is closed when this is not a participant. */
    private readonly connect: () => LiveLabTransport,
    private readonly options: ParticipantWorkshopOptions = {},
  ) {}

  start(): void {
    if (this.transport !== null) return;
    const transport = this.connect();
    this.transport = transport;
    transport.onConnect(() => void this.load());
    transport.on("workshop:participant", (view: ParticipantWorkshopView) => {
      this.pushes += 1;
      this.receive(view);
    });
    void this.load();
  }

  stop(): void {
    this.seq += 1; // answers still on their way are for a connection that is gone
    this.transport?.close();
    this.transport = null;
  }

  /** Who this is, then their workshop; anybody but a participant stops here and the connection closes. */
  async load(): Promise<void> {
    const transport = this.transport;
    if (transport === null) return;
    const seq = ++this.seq;
    if (this.me === null) {
      const who = await transport.send({ op: "whoami" });
      if (seq !== this.seq) return;
      // Unanswered: maybe nobody's workshop at all, so nothing shows; the next connect asks again.
      if (!who.ok) return;
      this.me = who.me;
      if (who.me.role !== "participant") {
        this.update({ status: "none", handled: this.state.handled });
        this.stop();
        return;
      }
      this.update({ ...this.state, handled: new Set([...this.state.handled, ...loadHandled(this.options.storage ?? null, who.me.id)]) });
    }
    const pushes = this.pushes;
    const ack = await transport.send({ op: "my-workshop" });
    if (seq !== this.seq || pushes !== this.pushes) return;
    if (ack.ok) this.receive(ack.participantWorkshop);
    else if (ack.code === "not-found") this.update({ status: "none", handled: this.state.handled });
    else this.fail(ack.error);
  }

  /** The participant dismissed a broadcast, or applied its preset: it is not shown again. */
  handle(broadcastId: string): void {
    if (this.state.handled.has(broadcastId)) return;
    const handled = new Set(this.state.handled).add(broadcastId);
    if (this.me !== null) saveHandled(this.options.storage ?? null, this.me.id, handled);
    this.update({ ...this.state, handled });
  }

  private receive(view: ParticipantWorkshopView): void {
    const previous = this.state.status === "ready" ? this.state.view : null;
    // The server pushes on every change in the workshop (anyone's run): an unchanged view changes nothing here.
    if (previous !== null && sameView(previous, view)) return;
    this.update({ status: "ready", view, handled: this.state.handled });
    if (turnedAdmitted(previous, view)) this.options.onAdmitted?.();
  }

  /** A failure keeps a view already shown; without one, the banner says what went wrong. */
  private fail(error: string): void {
    if (this.state.status !== "ready") this.update({ status: "error", error, handled: this.state.handled });
  }

  private get state(): ParticipantWorkshopState {
    return this.store.getState();
  }

  private update(next: ParticipantWorkshopState): void {
    this.store.set(next);
  }
}

function sameView(a: ParticipantWorkshopView, b: ParticipantWorkshopView): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether the notebook list must reload: the participant is admitted now and
 * was not known to be a moment ago (their copies were just made). The first
 * view counts too: an admission between the list's load and this answer
 * would otherwise leave the list empty.
 */
export function turnedAdmitted(previous: ParticipantWorkshopView | null, next: ParticipantWorkshopView): boolean {
  return next.state === "admitted" && previous?.state !== "admitted";
}

// ---- broadcasts ---------------------------------------------------------------------

/** Ids kept per participant, the newest last; older ones fall off (their broadcasts are long past). */
const MAX_HANDLED = 200;

export function handledKey(userId: string): string {
  return `mgpulab:workshop-broadcasts-handled:${userId}`;
}

/** The ids remembered for this participant; an unreadable entry reads as none. */
export function loadHandled(storage: BroadcastStorage | null, userId: string): Set<string> {
  const raw = storage?.getItem(handledKey(userId)) ?? null;
  if (raw === null) return new Set();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    if (err instanceof SyntaxError) return new Set();
    throw err;
  }
  return new Set(Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === "string") : []);
}

export function saveHandled(storage: BroadcastStorage | null, userId: string, handled: ReadonlySet<string>): void {
  if (storage === null) return;
  try {
    storage.setItem(handledKey(userId), JSON.stringify([...handled].slice(-MAX_HANDLED)));
  } catch (err) {
    // Storage full or refused: the banner still hides it until the page reloads.
    if (!(err instanceof DOMException)) throw err;
  }
}

/**
 * The broadcasts to show, newest first: those after the newest one the
 * participant handled (handling the latest clears the earlier ones too), and
 * not handled themselves.
 */
export function unseenBroadcasts(broadcasts: readonly WorkshopBroadcast[], handled: ReadonlySet<string>): WorkshopBroadcast[] {
  let lastHandled = -1;
  broadcasts.forEach((broadcast, i) => {
    if (handled.has(broadcast.id)) lastHandled = i;
  });
  return broadcasts.slice(lastHandled + 1).reverse();
}

/** "batch_size = 62, devices = 2" */
export function presetValuesText(values: Readonly<Record<string, ParameterValue>>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name} = ${String(value)}`)
    .join(", ");
}

/** The scenario a template id belongs to: "dp-basics/split" → "dp-basics". */
export function scenarioOfTemplate(templateId: string): string {
  const slash = templateId.indexOf("/");
  return slash < 0 ? templateId : templateId.slice(0, slash);
}

type SetParameters = Extract<NotebookCommand, { op: "set-parameters" }>;

export type PresetPlan =
  /** Not a copy of the preset's scenario: nothing to offer on this page. */
  | { kind: "elsewhere" }
  /** Offer "Apply"; `notApplied`: the preset's values this notebook's forms have no field for. */
  | { kind: "apply"; command: SetParameters; notApplied: string[] }
  /** A copy of the scenario where the preset cannot apply, and why. */
  | { kind: "cannot"; reason: string };

/**
 * What applying `preset` to this notebook sends: `set-parameters` (the server
 * re-renders every attached cell of the scenario) with only the values some
 * attached cell has a field for, on the first attached cell of the scenario
 * whose form shows one of them (a refusal appears under that form).
 */
export function presetCommand(
  notebookId: string,
  cells: readonly Pick<Cell, "id" | "template">[],
  preset: NonNullable<WorkshopBroadcast["preset"]>,
): PresetPlan {
  const ofScenario = cells.filter((cell) => cell.template !== null && scenarioOfTemplate(cell.template.id) === preset.scenarioId);
  if (ofScenario.length === 0) return { kind: "elsewhere" };
  const attached = ofScenario.filter((cell) => cell.template?.detached === false);
  if (attached.length === 0) return { kind: "cannot", reason: `every cell of ${preset.scenarioId} is detached here: reattach one to apply these values` };
  const fieldsOf = (cell: (typeof attached)[number]) => new Set(cell.template?.fields.map((field) => field.name) ?? []);
  const fields = new Set(attached.flatMap((cell) => [...fieldsOf(cell)]));
  const values: Record<string, ParameterValue> = {};
  const notApplied: string[] = [];
  for (const [name, value] of Object.entries(preset.values)) {
    if (fields.has(name)) values[name] = value;
    else notApplied.push(name);
  }
  const names = Object.keys(values);
  if (names.length === 0) return { kind: "cannot", reason: `none of these values is a field of this notebook's forms (${notApplied.join(", ")})` };
  const target = attached.find((cell) => names.some((name) => fieldsOf(cell).has(name))) ?? attached[0]!;
  return { kind: "apply", command: { op: "set-parameters", notebookId, cellId: target.id, values }, notApplied };
}

// ---- steps and time -----------------------------------------------------------------

/**
 * The cells a participant's notebook leaves out: with pace "led", the steps
 * the facilitator has not revealed (the server refuses to run them). After
 * the end nothing runs any more, so every step shows.
 */
export function unrevealedCells(cells: readonly Cell[], view: Pick<ParticipantWorkshopView, "pace" | "revealedSteps" | "state"> | null): ReadonlySet<string> {
  if (view === null || view.pace !== "led" || view.state === "ended") return NO_CELLS;
  return hiddenCells(cells, view.revealedSteps);
}

const NO_CELLS: ReadonlySet<string> = new Set();

/** In a led workshop, the first step not revealed yet: its 1-based number, the step count and its title; null otherwise. */
export function nextHiddenStep(cells: readonly Cell[], view: Pick<ParticipantWorkshopView, "pace" | "revealedSteps" | "state"> | null): { number: number; count: number; title: string } | null {
  if (view === null || view.pace !== "led" || view.state === "ended") return null;
  const steps = notebookSteps(cells);
  const next = steps[view.revealedSteps];
  return next === undefined ? null : { number: view.revealedSteps + 1, count: steps.length, title: next.title };
}

/** When under this much is left, the banner counts down. */
export const COUNTDOWN_FROM_MS = 15 * 60_000;

/** "12 min left", "40 s left" in the last 15 minutes; null before them, after the end, or without an end. */
export function countdownWords(endsAt: string | null, now: number): string | null {
  if (endsAt === null) return null;
  const left = Date.parse(endsAt) - now;
  if (Number.isNaN(left) || left <= 0 || left > COUNTDOWN_FROM_MS) return null;
  return left < 60_000 ? `${Math.ceil(left / 1000)} s left` : `${Math.ceil(left / 60_000)} min left`;
}

/** "14:00–16:30", "until 16:30", "starts 14:00", or "" when no time is set; `clock` formats one time. */
export function scheduleWords(view: Pick<ParticipantWorkshopView, "startsAt" | "endsAt">, now: number, clock: (iso: string) => string): string {
  const { startsAt, endsAt } = view;
  if (startsAt !== null && endsAt !== null) return `${clock(startsAt)}–${clock(endsAt)}`;
  if (startsAt !== null) return Date.parse(startsAt) > now ? `starts ${clock(startsAt)}` : `started ${clock(startsAt)}`;
  if (endsAt !== null) return `until ${clock(endsAt)}`;
  return "";
}
