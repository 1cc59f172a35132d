/**
 * The facilitator's workshops page: their workshops (join link, who joined,
 * each participant's notebooks) and making one from scenarios. What each
 * workshop shows is computed by workshopCard(), so the component only renders.
 */
import type { WorkshopView } from "../../../server/core/protocol/accounts-model";
import type { ScenarioSummary } from "../../../server/core/protocol/notebook-model";
import { MAX_WORKSHOP_CAPACITY } from "../../../server/core/protocol/socket-api";
import type { LabReply, LabRequest } from "../../../server/core/protocol/ops-lab";
import type { WorkshopPace } from "../../../server/core/protocol/workshop-model";
import type { LabTransport } from "../../shell/model/lab-client";
import { PolledPage } from "../../shell/model/polling-store";

export interface WorkshopsState {
  status: "loading" | "ready" | "error";
  /** Newest first. */
  workshops: readonly WorkshopView[];
  /** What a workshop can be made from; null until listed. */
  scenarios: readonly ScenarioSummary[] | null;
  error: string | null;
  creating: boolean;
}

/** One workshop, in words and links. */
export interface WorkshopCard {
  id: string;
  title: string;
  joinCode: string;
  joinUrl: string;
  open: boolean;
  ended: boolean;
  /** The facilitator console of this workshop. */
  consoleHref: string;
  scenarios: string;
  /** "open", "closed to new joiners", "ended", or "starts …": where it stands now. */
  status: string;
  /** "Led by you: participants see the steps you reveal" or "Everyone at their own pace". */
  pace: string;
  /** "12 of 60 places taken" */
  seats: string;
  sizing: WorkshopView["sizing"];
  participants: Array<{ id: string; name: string; waiting: boolean; notebooks: Array<{ id: string; title: string; href: string }> }>;
}

/** The full address a participant opens: `<origin>/join/<code>`. */
export function joinUrl(origin: string, joinCode: string): string {
  return `${origin.replace(/\/+$/, "")}/join/${encodeURIComponent(joinCode)}`;
}

export function workshopCard(view: WorkshopView, origin: string, scenarios: readonly ScenarioSummary[] | null, now: number = Date.now()): WorkshopCard {
  const titles = new Map((scenarios ?? []).map((s) => [s.id, s.title]));
  const admitted = view.participants.filter((p) => !p.waiting).length;
  const waiting = view.participants.length - admitted;
  const startsAt = view.startsAt === null ? null : Date.parse(view.startsAt);
  const status =
    view.endedAt !== null
      ? "ended"
      : startsAt !== null && startsAt > now
        ? `starts ${new Date(startsAt).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}`
        : view.closedAt !== null
          ? "running, closed to new joiners"
          : "open: people can join";
  return {
    id: view.id,
    title: view.title,
    joinCode: view.joinCode,
    joinUrl: joinUrl(origin, view.joinCode),
    open: view.closedAt === null,
    ended: view.endedAt !== null,
    consoleHref: `/workshops/${encodeURIComponent(view.id)}`,
    scenarios: view.scenarioIds.map((id) => titles.get(id) ?? id).join(" · "),
    status,
    pace: view.pace === "led" ? "Led by you: participants see the steps you reveal" : "Self-paced: everyone sees every step",
    seats: `${admitted} of ${view.capacity} places taken${waiting > 0 ? `, ${waiting} waiting` : ""}`,
    sizing: view.sizing,
    participants: view.participants.map((p) => ({
      id: p.id,
      name: p.name,
      waiting: p.waiting,
      notebooks: p.notebooks.map((n) => ({ id: n.id, title: n.title, href: `/notebooks/${encodeURIComponent(n.id)}` })),
    })),
  };
}

export function sortWorkshops(workshops: readonly WorkshopView[]): WorkshopView[] {
  return [...workshops].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || a.title.localeCompare(b.title));
}

/** Why the form cannot be sent yet, or null. */
export function newWorkshopProblem(title: string, scenarioIds: readonly string[]): string | null {
  if (title.trim() === "") return "a title is needed";
  if (scenarioIds.length === 0) return "pick at least one scenario";
  return null;
}

/** The new-workshop form's optional fields as typed (datetime-local values, numbers as text). */
export interface NewWorkshopFields {
  startsAt: string;
  endsAt: string;
  capacity: string;
  gpusPerParticipant: string;
  pace: WorkshopPace;
}

export const DEFAULT_WORKSHOP_FIELDS: NewWorkshopFields = { startsAt: "", endsAt: "", capacity: "60", gpusPerParticipant: "0", pace: "self" };

export type NewWorkshopOptions = Pick<LabRequest<"create-workshop">, "startsAt" | "endsAt" | "capacity" | "gpusPerParticipant" | "pace">;

/**
 * A `datetime-local` value ("2026-11-26T09:00") as an ISO time with the
 * browser's zone offset ("2026-11-26T09:00:00+01:00"), or null when it is no
 * such value. The zone is the one in force at that moment (summer time too).
 */
export function localDateTimeToIso(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "00"].map(Number) as [number, number, number, number, number, number];
  const date = new Date(year, month - 1, day, hour, minute, second);
  // A day or an hour that does not exist (31 February, 25:00) rolls over: not what was typed.
  if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day || date.getHours() !== hour || date.getMinutes() !== minute) return null;
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const pad = (n: number) => String(Math.abs(n)).padStart(2, "0");
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${pad(second)}${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** The optional fields as the command's options, or why they cannot be sent. */
export function newWorkshopOptions(fields: NewWorkshopFields): { ok: true; options: NewWorkshopOptions } | { ok: false; error: string } {
  const options: NewWorkshopOptions = { pace: fields.pace };
  if (fields.startsAt.trim() !== "") {
    const iso = localDateTimeToIso(fields.startsAt);
    if (iso === null) return { ok: false, error: "the start is not a date and time" };
    options.startsAt = iso;
  }
  if (fields.endsAt.trim() !== "") {
    const iso = localDateTimeToIso(fields.endsAt);
    if (iso === null) return { ok: false, error: "the end is not a date and time" };
    options.endsAt = iso;
  }
  if (options.startsAt !== undefined && options.endsAt !== undefined && Date.parse(options.endsAt) <= Date.parse(options.startsAt)) {
    return { ok: false, error: "the end must be after the start" };
  }
  const capacityError = capacityProblem(fields.capacity);
  if (capacityError !== null) return { ok: false, error: capacityError };
  options.capacity = Number(fields.capacity.trim());
  const gpus = Number(fields.gpusPerParticipant.trim());
  if (fields.gpusPerParticipant.trim() === "" || !Number.isInteger(gpus) || gpus < 0 || gpus > 64) {
    return { ok: false, error: "GPUs per participant is a whole number from 0 (CPU emulation) to 64" };
  }
  options.gpusPerParticipant = gpus;
  return { ok: true, options };
}

type ListReply = LabReply<"list-workshops">;

export class WorkshopsController extends PolledPage<WorkshopsState, ListReply> {
  constructor(
    private readonly transport: LabTransport,
    pollMs = 10_000,
  ) {
    super(
      transport,
      { status: "loading", workshops: [], scenarios: null, error: null, creating: false },
      { what: "Loading the workshops", fetch: () => transport.send({ op: "list-workshops" }), apply: (reply) => ({ workshops: sortWorkshops(reply.workshops) }), pollMs },
    );
  }

  /** Lists the workshops and the scenarios; the list is refreshed while the page is open (participants keep joining). */
  override start(): void {
    super.start();
    void this.loadScenarios();
  }

  async loadScenarios(): Promise<void> {
    const ack = await this.transport.send({ op: "list-scenarios" });
    if (ack.ok) this.store.update({ scenarios: ack.scenarios });
    else this.store.update({ error: `Loading the scenarios failed: ${ack.error}` });
  }

  /** Makes a workshop (times, capacity, GPUs and pace as `fields` say; the server's defaults without them); the new one, or null with the reason shown. */
  async create(title: string, scenarioIds: readonly string[], fields?: NewWorkshopFields): Promise<WorkshopView | null> {
    const problem = newWorkshopProblem(title, scenarioIds);
    const options = fields === undefined ? ({ ok: true, options: {} } as const) : newWorkshopOptions(fields);
    if (problem !== null || !options.ok) {
      this.store.update({ error: `Creating the workshop failed: ${problem ?? (options.ok ? "" : options.error)}` });
      return null;
    }
    this.store.update({ creating: true, error: null });
    const ack = await this.transport.send({ op: "create-workshop", title: title.trim(), scenarioIds: [...scenarioIds], ...options.options });
    this.store.supersede(); // a list asked before this answer is older than it
    this.store.update({ creating: false });
    if (!ack.ok) {
      this.store.update({ error: `Creating the workshop failed: ${ack.error}` });
      return null;
    }
    const made = ack.workshop;
    this.store.update({ workshops: sortWorkshops([made, ...this.getState().workshops.filter((w) => w.id !== made.id)]) });
    return made;
  }

}

/** Why this capacity cannot be sent, or null (the creation form and the console's capacity field). */
export function capacityProblem(text: string): string | null {
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(value) || value < 1 || value > MAX_WORKSHOP_CAPACITY) return `the capacity is a whole number from 1 to ${MAX_WORKSHOP_CAPACITY}`;
  return null;
}
