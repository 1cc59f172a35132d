/**
 * The facilitator console of one workshop (/workshops/<id>): the view the
 * server computes (`workshop-console`, then pushed as `workshop:console` on
 * every change), the room's settings, restarting a participant's kernel and
 * broadcasting to the class. Every number on the page is the server's; what
 * each part says is computed by pure functions beside it
 * (workshop-console-words.ts, broadcast-form.ts), so the component only
 * renders and the words are tested without a browser.
 */
import type { LabRequest } from "../../../server/core/protocol/ops-lab";
import type { Refusal } from "../../../server/core/protocol/op-table";
import type { WorkshopConsoleView, WorkshopPace } from "../../../server/core/protocol/workshop-model";
import { broadcastCommand, type BroadcastDraft } from "./broadcast-form";
import type { LiveLabTransport } from "../../shell/model/lab-client";
import { capacityProblem } from "./workshops";
import { ViewStore } from "../../shell/model/view-store";

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

/** The newer of two views (by the time the server computed them): a late answer never replaces a fresher push. */
export function newerView(current: WorkshopConsoleView | null, incoming: WorkshopConsoleView): WorkshopConsoleView {
  if (current === null) return incoming;
  return Date.parse(incoming.computedAt) >= Date.parse(current.computedAt) ? incoming : current;
}

type WorkshopChange = Omit<LabRequest<"update-workshop">, "op" | "workshopId">;

export class WorkshopConsoleController {
  private readonly store = new ViewStore<WorkshopConsoleState>({ status: "loading", view: null, error: null, busy: false, confirmingEnd: false, restarting: [], sent: 0, scenarioTitles: {} });
  readonly subscribe = this.store.subscribe;
  readonly getState = this.store.getState;
  private unfollow: (() => void) | null = null;
  private seq = 0;

  constructor(
    readonly workshopId: string,
    private readonly transport: LiveLabTransport,
  ) {}

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

  private get state(): WorkshopConsoleState {
    return this.store.getState();
  }

  private update(patch: Partial<WorkshopConsoleState>): void {
    this.store.update(patch);
  }
}

function refusal(what: string, refused: Refusal): string {
  return `${what} failed: ${refused.error}`;
}
