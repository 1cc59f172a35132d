/**
 * A workshop participant's pages: their place in the queue turning into
 * their notebooks (the list reloads), the facilitator's broadcasts (a preset
 * becomes the set-parameters command of the open notebook; dismissed ones
 * stay dismissed), and a led workshop's unrevealed steps, against an
 * in-memory lab that answers and pushes as the protocol says (the server is
 * faked, the models are real).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LabEventArgs, LiveLabTransport } from "../../components/shell/model/lab-client";
import { NotebookListController } from "../../components/notebooks/model/notebook-list";
import {
  countdownWords,
  handledKey,
  loadHandled,
  ParticipantWorkshopController,
  presetCommand,
  presetValuesText,
  scheduleWords,
  turnedAdmitted,
  unrevealedCells,
  unseenBroadcasts,
  type BroadcastStorage,
} from "../../components/workshops/model/participant-workshop";
import type { Me, Role } from "../../server/core/protocol/accounts-model";
import type { Cell, NotebookListItem, ParameterField, ParameterValue } from "../../server/core/protocol/notebook-model";
import { labCommandSchema, notebookCommandSchema, type LabCommand } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import type { ParticipantWorkshopView, WorkshopBroadcast } from "../../server/core/protocol/workshop-model";

function me(role: Role): Me {
  return {
    id: role === "participant" ? "u-pia" : "u-ada",
    name: role === "participant" ? "Pia" : "Ada",
    email: role === "participant" ? null : "ada@lab.test",
    role,
    workshopId: role === "participant" ? "ws-1" : null,
    sessionExpiresAt: "2025-06-08T12:00:00Z",
    can: { createNotebooks: role !== "participant", manageUsers: role === "admin", runWorkshops: role === "facilitator", seeHosts: role !== "participant" },
  };
}

function view(patch: Partial<ParticipantWorkshopView> = {}): ParticipantWorkshopView {
  return {
    id: "ws-1",
    title: "DataParallel in practice",
    state: "admitted",
    queuePosition: null,
    waitingBecause: null,
    startsAt: null,
    endsAt: null,
    pace: "self",
    revealedSteps: 1,
    resources: "CPU emulation on host local (no GPU per participant), for up to 1 participants",
    broadcasts: [],
    ...patch,
  };
}

function broadcast(id: string, patch: Partial<WorkshopBroadcast> = {}): WorkshopBroadcast {
  return { id, at: "2025-06-08T10:00:00Z", message: `message ${id}`, preset: null, ...patch };
}

function copy(title: string): NotebookListItem {
  return { id: `nb-${title.length}`, title, owner: { id: "u-pia", name: "Pia" }, access: "edit", cellCount: 18, updatedAt: "2025-06-08T10:00:00Z", deletedAt: null };
}

/** Waits until every answer already given has been taken in. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The lab as one participant's sockets see it: `whoami`, `my-workshop`, the
 * notebook list (their copies exist once admitted), and the pushes of
 * `workshop:participant`. `hold` keeps the next `my-workshop` answer until released.
 */
class WorkshopLab implements LiveLabTransport {
  readonly sent: LabCommand["op"][] = [];
  closed = false;
  /** The server is out of reach: every command times out. */
  offline = false;
  private readonly connectListeners: Array<() => void> = [];
  private readonly viewListeners: Array<(view: ParticipantWorkshopView) => void> = [];
  private held: Array<() => void> | null = null;

  constructor(
    public me: Me,
    public current: ParticipantWorkshopView,
  ) {}

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    labCommandSchema.parse(command);
    this.sent.push(command.op);
    if (this.offline) return Promise.resolve({ ok: false, error: "no answer from the server (timed out or disconnected)", code: "unavailable" });
    switch (command.op) {
      case "whoami":
        return Promise.resolve({ ok: true, me: this.me });
      case "my-workshop": {
        if (this.me.role !== "participant") return Promise.resolve({ ok: false, error: "you are not in a workshop", code: "not-found" });
        // The answer is computed now, as the server reads the database when asked.
        const answer: LabAnswer<LabOp> = { ok: true, participantWorkshop: structuredClone(this.current) };
        if (this.held === null) return Promise.resolve(answer);
        const held = this.held;
        return new Promise((resolve) => held.push(() => resolve(answer)));
      }
      case "list-notebooks":
        return Promise.resolve({ ok: true, notebooks: command.state === "active" && this.current.state !== "waiting" ? [copy("DataParallel basics")] : [] });
      default:
        return Promise.resolve({ ok: false, error: `the workshop lab does not answer ${command.op}`, code: "unavailable" });
    }
  }

  onConnect(listener: () => void): void {
    this.connectListeners.push(listener);
  }

  on(...args: LabEventArgs): () => void {
    const [event, listener] = args;
    if (event !== "workshop:participant") return () => undefined;
    this.viewListeners.push(listener);
    return () => this.viewListeners.splice(this.viewListeners.indexOf(listener), 1);
  }

  close(): void {
    this.closed = true;
  }

  /** The server's push after a change. */
  push(patch: Partial<ParticipantWorkshopView>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of this.viewListeners) listener(structuredClone(this.current));
  }

  reconnect(): void {
    for (const listener of this.connectListeners) listener();
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const answer of held) answer();
  }

  count(op: LabCommand["op"]): number {
    return this.sent.filter((sent) => sent === op).length;
  }
}

/** A map-backed localStorage. */
class MemoryStorage implements BroadcastStorage {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

async function started(lab: WorkshopLab, options: ConstructorParameters<typeof ParticipantWorkshopController>[1] = {}): Promise<ParticipantWorkshopController> {
  const workshop = new ParticipantWorkshopController(() => lab, options);
  workshop.start();
  await settle();
  return workshop;
}

describe("a participant's place in the queue", () => {
  it("waiting, then admitted: the notebook list reloads and shows the copies made for them", async () => {
    const lab = new WorkshopLab(me("participant"), view({ state: "waiting", queuePosition: 1 }));
    const list = new NotebookListController(lab);
    list.start();
    const workshop = await started(lab, { onAdmitted: () => void list.refresh() });
    const state = workshop.getState();
    assert.equal(state.status, "ready");
    assert.equal(state.status === "ready" && state.view.queuePosition, 1);
    assert.deepEqual(list.getState().active, [], "nothing yet while waiting");
    const listed = lab.count("list-notebooks");

    lab.push({ state: "admitted", queuePosition: null });
    await settle();
    assert.equal(lab.count("list-notebooks"), listed + 2, "the list asked again (active and deleted)");
    assert.deepEqual(
      list.getState().active.map((n) => n.title),
      ["DataParallel basics"],
    );
  });

  it("a broadcast to an admitted participant does not reload the list, and an unchanged push changes nothing", async () => {
    const lab = new WorkshopLab(me("participant"), view());
    let reloads = 0;
    const workshop = await started(lab, { onAdmitted: () => (reloads += 1) });
    assert.equal(reloads, 1, "the first view counts: an admission just before it would otherwise leave the list empty");
    let notified = 0;
    workshop.subscribe(() => (notified += 1));
    lab.push({});
    assert.equal(notified, 0, "the server pushes on anyone's run; the same view is no news");
    lab.push({ broadcasts: [broadcast("b1")] });
    assert.equal(notified, 1);
    assert.equal(reloads, 1);
    assert.equal(turnedAdmitted(view({ state: "waiting", queuePosition: 2 }), view()), true);
    assert.equal(turnedAdmitted(view(), view({ state: "ended" })), false);
  });

  it("asks again after a reconnect, and an answer asked before a newer push does not undo it", async () => {
    const lab = new WorkshopLab(me("participant"), view({ state: "waiting", queuePosition: 2 }));
    const workshop = await started(lab);
    lab.push({ queuePosition: 1 });
    lab.current = { ...lab.current, queuePosition: 1 };
    lab.hold();
    lab.reconnect();
    await settle();
    assert.equal(lab.count("my-workshop"), 2, "asked again on the reconnect");
    // While that answer is on its way, the facilitator raises the capacity.
    lab.push({ state: "admitted", queuePosition: null });
    lab.release();
    await settle();
    const state = workshop.getState();
    assert.equal(state.status === "ready" && state.view.state, "admitted", "the older answer (still waiting) was dropped");
    assert.equal(lab.count("whoami"), 1, "who this is does not change with a reconnect");
  });

  it("an unanswered whoami shows nothing until the next connect; an unanswered my-workshop says so, and a later view replaces it", async () => {
    const lab = new WorkshopLab(me("participant"), view({ state: "waiting", queuePosition: 3 }));
    lab.offline = true;
    const workshop = await started(lab);
    assert.equal(workshop.getState().status, "loading", "who this is is unknown: no banner, not even an error (a member must never see one)");
    lab.offline = false;
    lab.reconnect();
    await settle();
    assert.equal(workshop.getState().status, "ready");
    lab.offline = true;
    lab.reconnect();
    await settle();
    assert.equal(workshop.getState().status, "ready", "a failure keeps the view already shown");

    const fresh = new WorkshopLab(me("participant"), view());
    const failing = new ParticipantWorkshopController(() => fresh);
    failing.start(); // whoami goes out now and is answered
    fresh.offline = true; // my-workshop, asked once it is, is not
    await settle();
    const failed = failing.getState();
    assert.equal(failed.status, "error");
    assert.match(failed.status === "error" ? failed.error : "", /no answer from the server/);
    fresh.push({ revealedSteps: 2 });
    assert.equal(failing.getState().status, "ready");
  });

  it("anybody but a participant gets nothing, and the connection closes", async () => {
    const lab = new WorkshopLab(me("member"), view());
    const workshop = await started(lab);
    assert.equal(workshop.getState().status, "none");
    assert.equal(lab.closed, true);
    assert.deepEqual(lab.sent, ["whoami"]);
  });
});

describe("broadcasts", () => {
  it("dismissed broadcasts stay dismissed, across a reload of the page", async () => {
    const storage = new MemoryStorage();
    const lab = new WorkshopLab(me("participant"), view({ broadcasts: [broadcast("b1"), broadcast("b2")] }));
    const first = await started(lab, { storage });
    const unseen = () => {
      const state = first.getState();
      return state.status === "ready" ? unseenBroadcasts(state.view.broadcasts, state.handled).map((b) => b.id) : [];
    };
    assert.deepEqual(unseen(), ["b2", "b1"], "newest first");
    first.handle("b1");
    assert.deepEqual(unseen(), ["b2"]);
    first.handle("b2");
    assert.deepEqual(unseen(), []);
    lab.push({ broadcasts: [broadcast("b1"), broadcast("b2"), broadcast("b3")] });
    assert.deepEqual(unseen(), ["b3"], "a new one shows");

    // The page reloads: a new controller reads what this browser remembered for this participant.
    const again = await started(new WorkshopLab(me("participant"), lab.current), { storage });
    const state = again.getState();
    assert.equal(state.status, "ready");
    assert.deepEqual(state.status === "ready" ? unseenBroadcasts(state.view.broadcasts, state.handled).map((b) => b.id) : null, ["b3"]);
    assert.deepEqual([...loadHandled(storage, "u-pia")].sort(), ["b1", "b2"]);
  });

  it("handling the newest clears the earlier ones; unreadable memory reads as none", () => {
    const all = [broadcast("b1"), broadcast("b2"), broadcast("b3")];
    assert.deepEqual(unseenBroadcasts(all, new Set(["b3"])), []);
    assert.deepEqual(unseenBroadcasts(all, new Set(["b2"])).map((b) => b.id), ["b3"]);
    assert.deepEqual(unseenBroadcasts(all, new Set(["b1", "b3"])), []);
    const storage = new MemoryStorage();
    storage.setItem(handledKey("u-pia"), "{not json");
    assert.deepEqual(loadHandled(storage, "u-pia"), new Set());
    storage.setItem(handledKey("u-pia"), JSON.stringify(["b1", 7, null]));
    assert.deepEqual(loadHandled(storage, "u-pia"), new Set(["b1"]));
    assert.deepEqual(loadHandled(null, "u-pia"), new Set());
  });

  it("a preset becomes set-parameters on the first attached form of its scenario, and says which values do not apply", () => {
    const cells = dpBasicsCells();
    const plan = presetCommand("nb-1", cells, { scenarioId: "dp-basics", values: { batch_size: 62, devices: 2, warp_drive: true } });
    assert.equal(plan.kind, "apply");
    if (plan.kind !== "apply") return;
    notebookCommandSchema.parse(plan.command);
    assert.deepEqual(plan.command, { op: "set-parameters", notebookId: "nb-1", cellId: "c03", values: { batch_size: 62, devices: 2 } });
    assert.equal(cells.find((c) => c.id === plan.command.cellId)?.template?.id, "dp-basics/split", "the experiment's form, not the intro's markdown");
    assert.deepEqual(plan.notApplied, ["warp_drive"]);
    assert.equal(presetValuesText({ batch_size: 62, compare_ddp: false }), "batch_size = 62, compare_ddp = false");

    // A value only a later cell's form has: that cell is the target.
    const steps = presetCommand("nb-1", cells, { scenarioId: "dp-basics", values: { steps: 5 } });
    assert.equal(steps.kind === "apply" && steps.command.cellId, "c06");

    // The split cell detached: the next attached form takes it.
    const detached = cells.map((c) => (c.id === "c03" && c.template ? { ...c, template: { ...c.template, detached: true } } : c));
    const next = presetCommand("nb-1", detached, { scenarioId: "dp-basics", values: { batch_size: 62 } });
    assert.equal(next.kind === "apply" && next.command.cellId, "c06");
  });

  it("a preset of another scenario is not offered; one that cannot apply here says why", () => {
    const cells = dpBasicsCells();
    assert.deepEqual(presetCommand("nb-1", cells, { scenarioId: "hangs", values: { batch_size: 62 } }), { kind: "elsewhere" });
    const none = presetCommand("nb-1", cells, { scenarioId: "dp-basics", values: { warp_drive: true } });
    assert.equal(none.kind, "cannot");
    assert.match(none.kind === "cannot" ? none.reason : "", /warp_drive/);
    const allDetached = cells.map((c) => (c.template ? { ...c, template: { ...c.template, detached: true } } : c));
    const detached = presetCommand("nb-1", allDetached, { scenarioId: "dp-basics", values: { batch_size: 62 } });
    assert.match(detached.kind === "cannot" ? detached.reason : "", /detached/);
  });
});

describe("a led workshop's steps", () => {
  it("shows only the revealed steps of a scenario notebook: each step is its experiment with the cells before it", () => {
    const cells = dpBasicsCells();
    const led = view({ pace: "led", revealedSteps: 1 });
    const shown = (revealedSteps: number) => cells.filter((c) => !unrevealedCells(cells, { ...led, revealedSteps }).has(c.id)).map((c) => c.template?.id);
    assert.deepEqual(shown(1), ["dp-basics/intro", "dp-basics/about-split", "dp-basics/split"]);
    assert.deepEqual(shown(2), [
      "dp-basics/intro",
      "dp-basics/about-split",
      "dp-basics/split",
      "dp-basics/explain-split",
      "dp-basics/about-equivalence",
      "dp-basics/equivalence",
    ]);
    assert.equal(shown(6).length, cells.length, "all six steps (five experiments and the verdicts)");
    assert.equal(shown(100).length, cells.length);
  });

  it("hides nothing at the participant's own pace, after the end, or for anyone without a workshop", () => {
    const cells = dpBasicsCells();
    assert.equal(unrevealedCells(cells, view({ pace: "self", revealedSteps: 1 })).size, 0);
    assert.equal(unrevealedCells(cells, view({ pace: "led", revealedSteps: 1, state: "ended" })).size, 0);
    assert.equal(unrevealedCells(cells, null).size, 0);
    assert.equal(unrevealedCells(cells, view({ pace: "led", revealedSteps: 1 })).size, cells.length - 3);
  });
});

describe("the workshop's times", () => {
  const clock = (iso: string) => iso.slice(11, 16);
  const at = Date.parse("2025-06-08T11:50:00Z");

  it("counts down in the last 15 minutes only", () => {
    assert.equal(countdownWords("2025-06-08T12:00:00Z", at), "10 min left");
    assert.equal(countdownWords("2025-06-08T12:05:00Z", at), "15 min left");
    assert.equal(countdownWords("2025-06-08T12:05:01Z", at), null);
    assert.equal(countdownWords("2025-06-08T11:50:40Z", at), "40 s left");
    assert.equal(countdownWords("2025-06-08T11:49:00Z", at), null, "over");
    assert.equal(countdownWords(null, at), null);
  });

  it("says the schedule in words", () => {
    assert.equal(scheduleWords({ startsAt: "2025-06-08T09:00:00Z", endsAt: "2025-06-08T12:00:00Z" }, at, clock), "09:00–12:00");
    assert.equal(scheduleWords({ startsAt: null, endsAt: "2025-06-08T12:00:00Z" }, at, clock), "until 12:00");
    assert.equal(scheduleWords({ startsAt: "2025-06-08T13:00:00Z", endsAt: null }, at, clock), "starts 13:00");
    assert.equal(scheduleWords({ startsAt: "2025-06-08T09:00:00Z", endsAt: null }, at, clock), "started 09:00");
    assert.equal(scheduleWords({ startsAt: null, endsAt: null }, at, clock), "");
  });
});

// ---- a realistic scenario notebook --------------------------------------------------

function field(name: string): ParameterField {
  return { name, type: name === "placement" ? "choice" : name === "compare_ddp" ? "bool" : "int", default: 0, help: "" };
}

const PARAMETERS: Record<string, ParameterValue> = { batch_size: 64, devices: 4, placement: "auto", hidden: 32, d_in: 16, steps: 3, lr: 0.05, seed: 0, timing_repeats: 5, compare_ddp: true };

/** The cells of dp-basics as the catalog renders them: markdown explanations, five experiments, then the verdicts. */
function dpBasicsCells(): Cell[] {
  const layout: Array<[Cell["kind"], string, string[]]> = [
    ["markdown", "intro", []],
    ["markdown", "about-split", []],
    ["code", "split", ["batch_size", "devices", "placement", "hidden", "d_in", "timing_repeats"]],
    ["markdown", "explain-split", []],
    ["markdown", "about-equivalence", []],
    ["code", "equivalence", ["batch_size", "devices", "placement", "hidden", "d_in", "steps", "lr", "seed"]],
    ["markdown", "explain-equivalence", []],
    ["markdown", "about-replication", []],
    ["code", "replication", ["batch_size", "devices", "placement", "hidden", "d_in", "lr", "seed", "timing_repeats"]],
    ["markdown", "explain-replication", []],
    ["markdown", "about-scaling", []],
    ["code", "scaling", ["batch_size", "devices", "placement", "hidden", "d_in", "lr", "seed", "timing_repeats", "compare_ddp"]],
    ["markdown", "explain-scaling", []],
    ["markdown", "about-placement", []],
    ["code", "placement", ["batch_size", "devices", "placement", "hidden", "d_in", "seed"]],
    ["markdown", "explain-placement", []],
    ["markdown", "about-verdicts", []],
    ["code", "verdicts", Object.keys(PARAMETERS)],
  ];
  return layout.map(([kind, name, fields], i) => ({
    id: `c${String(i + 1).padStart(2, "0")}`,
    kind,
    source: kind === "code" ? `# ${name}` : `**${name}**`,
    outputs: [],
    executionCount: null,
    runState: "idle",
    liveMetrics: null,
    lastRun: null,
    executionId: null,
    template: { id: `dp-basics/${name}`, parameters: PARAMETERS, detached: false, fields: fields.map(field), question: null },
  }));
}
