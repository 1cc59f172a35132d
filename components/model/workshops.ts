/**
 * The facilitator's workshops page: their workshops (join link, who joined,
 * each participant's notebooks) and making one from scenarios. What each
 * workshop shows is computed by workshopCard(), so the component only renders.
 */
import type { WorkshopView } from "../../server/core/protocol/accounts-model";
import type { ScenarioSummary } from "../../server/core/protocol/notebook-model";
import type { LabAck } from "../../server/core/protocol/socket-api";
import type { LabTransport } from "./lab-client";

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
  scenarios: string;
  participants: Array<{ id: string; name: string; notebooks: Array<{ id: string; title: string; href: string }> }>;
}

/** The full address a participant opens: `<origin>/join/<code>`. */
export function joinUrl(origin: string, joinCode: string): string {
  return `${origin.replace(/\/+$/, "")}/join/${encodeURIComponent(joinCode)}`;
}

export function workshopCard(view: WorkshopView, origin: string, scenarios: readonly ScenarioSummary[] | null): WorkshopCard {
  const titles = new Map((scenarios ?? []).map((s) => [s.id, s.title]));
  return {
    id: view.id,
    title: view.title,
    joinCode: view.joinCode,
    joinUrl: joinUrl(origin, view.joinCode),
    open: view.closedAt === null,
    scenarios: view.scenarioIds.map((id) => titles.get(id) ?? id).join(" · "),
    participants: view.participants.map((p) => ({
      id: p.id,
      name: p.name,
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

export class WorkshopsController {
  private state: WorkshopsState = { status: "loading", workshops: [], scenarios: null, error: null, creating: false };
  private readonly listeners = new Set<() => void>();
  private seq = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly transport: LabTransport,
    private readonly pollMs = 10_000,
  ) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): WorkshopsState => this.state;

  /** Lists the workshops and the scenarios; the list is refreshed while the page is open (participants keep joining). */
  start(): void {
    this.transport.onConnect(() => void this.refresh());
    void this.refresh();
    void this.loadScenarios();
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.transport.close();
  }

  async refresh(): Promise<void> {
    const seq = ++this.seq;
    const ack = await this.transport.send({ op: "list-workshops" });
    if (seq !== this.seq) return;
    if (!ack.ok || ack.workshops === undefined) {
      this.update({ status: this.state.status === "ready" ? "ready" : "error", error: refusal("Loading the workshops", ack, "workshops") });
      return;
    }
    this.update({ status: "ready", workshops: sortWorkshops(ack.workshops), error: this.state.status === "error" ? null : this.state.error });
  }

  async loadScenarios(): Promise<void> {
    const ack = await this.transport.send({ op: "list-scenarios" });
    if (ack.ok && ack.scenarios !== undefined) this.update({ scenarios: ack.scenarios });
    else this.update({ error: refusal("Loading the scenarios", ack, "scenarios") });
  }

  /** Makes a workshop; the new one, or null with the reason shown. */
  async create(title: string, scenarioIds: readonly string[]): Promise<WorkshopView | null> {
    const problem = newWorkshopProblem(title, scenarioIds);
    if (problem !== null) {
      this.update({ error: `Creating the workshop failed: ${problem}` });
      return null;
    }
    this.update({ creating: true, error: null });
    const ack = await this.transport.send({ op: "create-workshop", title: title.trim(), scenarioIds: [...scenarioIds] });
    ++this.seq; // a list asked before this answer is older than it
    this.update({ creating: false });
    if (!ack.ok || ack.workshop === undefined) {
      this.update({ error: refusal("Creating the workshop", ack, "workshop") });
      return null;
    }
    const made = ack.workshop;
    this.update({ workshops: sortWorkshops([made, ...this.state.workshops.filter((w) => w.id !== made.id)]) });
    return made;
  }

  dismissError(): void {
    if (this.state.error !== null) this.update({ error: null });
  }

  private update(patch: Partial<WorkshopsState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }
}

function refusal(what: string, ack: LabAck, expected: string): string {
  return `${what} failed: ${ack.ok ? `the server sent no ${expected}` : ack.error}`;
}
