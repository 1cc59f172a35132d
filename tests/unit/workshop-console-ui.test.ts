/**
 * The facilitator console's model against an in-memory lab that answers
 * `lab:command` as the protocol says (every command checked with the real
 * schema) and pushes `workshop:console` as the server does after a change:
 * the view followed live (a late answer never replaces a fresher push),
 * settings changed, the end asked twice, broadcasts and presets, a kernel
 * restarted, another facilitator's workshop read as not found; and the pure
 * words of the header, roster, tallies and the new-workshop form.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LabEventArgs, LiveLabTransport } from "../../components/shell/model/lab-client";
import { broadcastCommand, parsePreset, presetText } from "../../components/workshops/model/broadcast-form";
import { newerView, WorkshopConsoleController } from "../../components/workshops/model/workshop-console";
import { consoleHeader, formatWhen, kernelLook, ordinal, revealText, rosterCard, roomState, tallyCard } from "../../components/workshops/model/workshop-console-words";
import { capacityProblem, DEFAULT_WORKSHOP_FIELDS, localDateTimeToIso, newWorkshopOptions, workshopCard, WorkshopsController } from "../../components/workshops/model/workshops";
import type { WorkshopView } from "../../server/core/protocol/accounts-model";
import { labCommandSchema, type LabCommand, type ServerToClientEvents } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import type { QuestionTally, RosterRow, WorkshopConsoleView } from "../../server/core/protocol/workshop-model";

const T0 = Date.parse("2026-11-26T09:00:00Z");

function row(name: string, patch: Partial<RosterRow> = {}): RosterRow {
  return {
    participantId: `p-${name.toLowerCase()}`,
    name,
    joinedAt: "2026-11-26T09:01:00Z",
    queuePosition: null,
    online: true,
    notebook: { id: `nb-${name.toLowerCase()}`, title: "DataParallel basics", scenarioId: "dp-basics" },
    step: null,
    kernel: "idle",
    lastVerdict: null,
    predictions: {},
    ...patch,
  };
}

function tally(patch: Partial<QuestionTally> = {}): QuestionTally {
  return {
    questionId: "dp-basics/split",
    scenarioId: "dp-basics",
    text: "How does DataParallel split a batch of **64** on 4 devices?",
    choices: ["the same number on every device", "uneven chunks", "one device takes it all"],
    claims: ["splits-evenly"],
    predicted: [1, 1, 0],
    measured: [2, 0, 0],
    undecided: 0,
    participants: [],
    ...patch,
  };
}

function consoleView(patch: Partial<WorkshopConsoleView> = {}, at = T0): WorkshopConsoleView {
  return {
    workshop: {
      id: "ws-1",
      title: "Tuesday lab",
      joinCode: "K7Q2MNPR",
      scenarioIds: ["dp-basics"],
      startsAt: null,
      endsAt: null,
      closedAt: null,
      endedAt: null,
      pace: "self",
      revealedSteps: 1,
      plan: { hostId: null, gpusPerParticipant: 0, capacity: 60 },
      resources: "CPU emulation on host local (no GPU per participant), for up to 60 participants",
      sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] },
    },
    steps: { "dp-basics": ["split", "equivalence", "replication", "placement", "scaling", "verdicts"].map((id) => ({ id: `dp-basics/${id}`, title: id[0]!.toUpperCase() + id.slice(1) })) },
    roster: [row("Ada"), row("Bo")],
    tallies: [tally()],
    broadcasts: [],
    computedAt: new Date(at).toISOString(),
    ...patch,
  };
}

/** The server's side: one facilitator's workshop, answered and pushed as the protocol says. */
class ConsoleLab implements LiveLabTransport {
  view = consoleView();
  readonly sent: LabCommand[] = [];
  readonly restarted: string[] = [];
  private clock = T0;
  private readonly pushes = new Set<ServerToClientEvents["workshop:console"]>();
  private readonly connects: Array<() => void> = [];
  /** Answers held back until released (a slow server). */
  hold = false;
  private held: Array<() => void> = [];
  refuse: LabAnswer<LabOp> | null = null;

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    labCommandSchema.parse(command);
    this.sent.push(command);
    const answer = this.answer(command);
    if (!this.hold) return Promise.resolve(answer);
    return new Promise((resolve) => this.held.push(() => resolve(answer)));
  }

  release(): void {
    for (const wake of this.held.splice(0)) wake();
  }

  onConnect(listener: () => void): void {
    this.connects.push(listener);
  }

  reconnect(): void {
    for (const listener of this.connects) listener();
  }

  on(...args: LabEventArgs): () => void {
    const [event, listener] = args;
    if (event !== "workshop:console") return () => undefined;
    this.pushes.add(listener);
    return () => this.pushes.delete(listener);
  }

  close(): void {}

  /** The server recomputed the view (a participant ran something): every console gets it. */
  change(patch: Partial<WorkshopConsoleView>): void {
    this.view = { ...this.view, ...patch, computedAt: new Date((this.clock += 1_000)).toISOString() };
    for (const push of this.pushes) push(this.view.workshop.id, this.view);
  }

  /** An event for another workshop (its console is another page). */
  pushFor(workshopId: string, view: WorkshopConsoleView): void {
    for (const push of this.pushes) push(workshopId, view);
  }

  get listening(): number {
    return this.pushes.size;
  }

  private answer(command: LabCommand): LabAnswer<LabOp> {
    if (this.refuse !== null) return this.refuse;
    const notFound = (id: string): LabAnswer<LabOp> => ({ ok: false, error: `workshop ${id} not found`, code: "not-found" });
    switch (command.op) {
      case "workshop-console":
        return command.workshopId === this.view.workshop.id ? { ok: true, console: this.view } : notFound(command.workshopId);
      case "update-workshop": {
        if (command.workshopId !== this.view.workshop.id) return notFound(command.workshopId);
        if (this.view.workshop.endedAt !== null) return { ok: false, error: "this workshop has ended: nothing about it can change", code: "invalid" };
        const w = this.view.workshop;
        const at = new Date(this.clock + 1_000).toISOString();
        this.change({
          workshop: {
            ...w,
            closedAt: command.end ? at : command.closed === undefined ? w.closedAt : command.closed ? at : null,
            endedAt: command.end ? at : w.endedAt,
            pace: command.pace ?? w.pace,
            revealedSteps: command.revealedSteps ?? w.revealedSteps,
            plan: { ...w.plan, capacity: command.capacity ?? w.plan.capacity },
          },
        });
        return { ok: true, console: this.view };
      }
      case "workshop-broadcast":
        this.change({ broadcasts: [...this.view.broadcasts, { id: `b-${this.view.broadcasts.length + 1}`, at: new Date(this.clock).toISOString(), message: command.message ?? null, preset: command.preset ?? null }] });
        return { ok: true };
      case "restart-kernel":
        if (!this.view.roster.some((r) => r.notebook?.id === command.notebookId)) return { ok: false, error: `notebook ${command.notebookId} not found`, code: "not-found" };
        this.restarted.push(command.notebookId);
        return { ok: true };
      case "list-scenarios":
        return { ok: true, scenarios: [{ id: "dp-basics", title: "DataParallel basics", source: "a.md", sourceTitle: "", summary: "" }] };
      default:
        return { ok: false, error: `the console lab does not answer ${command.op}`, code: "unavailable" };
    }
  }
}

async function started(lab = new ConsoleLab(), workshopId = "ws-1"): Promise<WorkshopConsoleController> {
  const controller = new WorkshopConsoleController(workshopId, lab);
  controller.start();
  await settle();
  return controller;
}

/** Lets the fake's resolved answers reach the controller. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("workshop console: live view", () => {
  it("loads the view, follows the server's pushes, and lists the scenario titles", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    assert.equal(model.getState().status, "ready");
    assert.equal(model.getState().view?.roster.length, 2);
    assert.equal(model.getState().scenarioTitles["dp-basics"], "DataParallel basics");
    lab.change({ roster: [...lab.view.roster, row("Cy", { kernel: "starting" })] });
    assert.deepEqual(model.getState().view?.roster.map((r) => r.name), ["Ada", "Bo", "Cy"]);
  });

  it("ignores another workshop's pushes and an answer older than the push it follows", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    const shown = model.getState().view;
    lab.pushFor("ws-2", consoleView({ roster: [] }, T0 + 60_000));
    assert.equal(model.getState().view, shown, "another workshop's view changes nothing here");
    lab.hold = true;
    const reload = model.load();
    lab.change({ roster: [row("Ada", { kernel: "busy" }), row("Bo")] });
    lab.release();
    await reload;
    assert.notEqual(model.getState().view, shown);
    assert.equal(model.getState().view?.roster[0]?.kernel, "busy");
    // The answer to the reload was computed before the push: the push stays.
    assert.equal(newerView(consoleView({}, T0 + 5_000), consoleView({}, T0)).computedAt, new Date(T0 + 5_000).toISOString());
    assert.equal(newerView(null, consoleView()).computedAt, new Date(T0).toISOString());
  });

  it("asks for the view again after a reconnect (the server's room is per connection) and stops listening when stopped", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    const asked = () => lab.sent.filter((c) => c.op === "workshop-console").length;
    const before = asked();
    lab.reconnect();
    await settle();
    assert.equal(asked(), before + 1);
    assert.equal(lab.listening, 1);
    model.stop();
    assert.equal(lab.listening, 0);
  });

  it("reads another facilitator's workshop, or a missing one, as not found", async () => {
    const model = await started(new ConsoleLab(), "ws-other");
    assert.equal(model.getState().status, "not-found");
    assert.equal(model.getState().error, "workshop ws-other not found");
    assert.equal(model.getState().view, null);
  });

  it("shows a refusal in the server's words, and clears it once a view arrives", async () => {
    const lab = new ConsoleLab();
    lab.refuse = { ok: false, error: "a member may not run workshops", code: "forbidden" };
    const model = await started(lab);
    assert.equal(model.getState().status, "error");
    assert.equal(model.getState().error, "Loading the workshop failed: a member may not run workshops");
    lab.refuse = null;
    lab.change({});
    assert.equal(model.getState().status, "ready");
    assert.equal(model.getState().error, null);
  });
});

describe("workshop console: settings", () => {
  it("closes and reopens the room, sets the capacity and the pace, and reveals the next step", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    assert.equal(await model.setClosed(true), true);
    assert.equal(roomState(model.getState().view!.workshop), "closed");
    assert.equal(await model.setClosed(false), true);
    assert.equal(roomState(model.getState().view!.workshop), "open");
    assert.equal(await model.setCapacity(" 12 "), true);
    assert.equal(model.getState().view?.workshop.plan.capacity, 12);
    assert.equal(await model.setPace("led"), true);
    assert.equal(await model.revealNextStep(), true);
    assert.equal(await model.revealNextStep(), true);
    assert.equal(model.getState().view?.workshop.revealedSteps, 3);
    assert.deepEqual(
      lab.sent.filter((c) => c.op === "update-workshop").map(({ op: _op, workshopId: _id, ...change }) => change),
      [{ closed: true }, { closed: false }, { capacity: 12 }, { pace: "led" }, { revealedSteps: 2 }, { revealedSteps: 3 }],
    );
    assert.equal(model.getState().busy, false);
  });

  it("refuses a capacity that is not a whole number in range before sending it", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    assert.equal(await model.setCapacity("0"), false);
    assert.equal(model.getState().error, "Changing the capacity failed: the capacity is a whole number from 1 to 500");
    assert.equal(lab.sent.some((c) => c.op === "update-workshop"), false);
    assert.equal(capacityProblem("2.5"), "the capacity is a whole number from 1 to 500");
    assert.equal(capacityProblem("501"), "the capacity is a whole number from 1 to 500");
    assert.equal(capacityProblem(""), "the capacity is a whole number from 1 to 500");
    assert.equal(capacityProblem("500"), null);
  });

  it("ends the workshop only when asked twice; after that a change is refused in the server's words", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    assert.equal(await model.endNow(), false, "the first press only asks");
    assert.equal(model.getState().confirmingEnd, true);
    model.cancelEnd();
    assert.equal(model.getState().confirmingEnd, false);
    assert.equal(lab.sent.some((c) => c.op === "update-workshop"), false);
    model.askEnd();
    assert.equal(await model.endNow(), true);
    assert.equal(roomState(model.getState().view!.workshop), "ended");
    assert.equal(await model.setClosed(false), false);
    assert.equal(model.getState().error, "Reopening the room failed: this workshop has ended: nothing about it can change");
    model.dismissError();
    assert.equal(model.getState().error, null);
  });
});

describe("workshop console: broadcasts and kernels", () => {
  it("broadcasts a message and a typed preset; the list follows from the server's push", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    assert.equal(await model.broadcast({ message: "  Try 2 devices next  ", scenarioId: "dp-basics", preset: "devices = 2\ncompare_ddp=false\n# a comment\n\nplacement=cpu" }), true);
    assert.equal(model.getState().sent, 1);
    const sent = lab.sent.find((c) => c.op === "workshop-broadcast");
    assert.deepEqual(sent, { op: "workshop-broadcast", workshopId: "ws-1", message: "Try 2 devices next", preset: { scenarioId: "dp-basics", values: { devices: 2, compare_ddp: false, placement: "cpu" } } });
    assert.equal(model.getState().view?.broadcasts.length, 1);
    assert.equal(presetText(model.getState().view!.broadcasts[0]!.preset!), 'dp-basics: devices=2, compare_ddp=false, placement="cpu"');
    assert.equal(await model.broadcast({ message: "", scenarioId: "", preset: "" }), false);
    assert.equal(model.getState().error, "Broadcasting failed: write a message or a preset");
    assert.equal(model.getState().sent, 1);
  });

  it("parses preset lines into typed values and says which line is wrong", () => {
    assert.deepEqual(parsePreset("a=1\nb=-2.5e3\nc=true\nd=false\ne=hello world\nf=\"4\"\ng='true'\nh=0x10"), {
      ok: true,
      values: { a: 1, b: -2500, c: true, d: false, e: "hello world", f: "4", g: "true", h: "0x10" },
    });
    assert.deepEqual(parsePreset("a=1\nnot a line"), { ok: false, error: "line 2: write name=value" });
    assert.deepEqual(parsePreset("2x=1"), { ok: false, error: 'line 1: "2x" is not a parameter name (letters, digits and _, not starting with a digit)' });
    assert.deepEqual(parsePreset("a=1\na=2"), { ok: false, error: "line 2: a is set twice" });
    assert.equal(parsePreset(`a=${"x".repeat(201)}`).ok, false);
    assert.equal(parsePreset(Array.from({ length: 65 }, (_, i) => `p${i}=1`).join("\n")).ok, false);
    assert.deepEqual(parsePreset(""), { ok: true, values: {} });
  });

  it("builds only broadcasts the server takes", () => {
    assert.deepEqual(broadcastCommand("ws-1", { message: "", scenarioId: "", preset: "devices=2" }), { ok: false, error: "pick the scenario the preset is for" });
    assert.deepEqual(broadcastCommand("ws-1", { message: "hi", scenarioId: "dp-basics", preset: "  " }), { ok: false, error: "a preset needs at least one name=value line" });
    assert.deepEqual(broadcastCommand("ws-1", { message: " hi ", scenarioId: "", preset: "" }), { ok: true, command: { op: "workshop-broadcast", workshopId: "ws-1", message: "hi" } });
    const presetOnly = broadcastCommand("ws-1", { message: " ", scenarioId: "dp-basics", preset: "seed=7" });
    assert.ok(presetOnly.ok);
    assert.doesNotThrow(() => labCommandSchema.parse(presetOnly.command));
    assert.equal("message" in presetOnly.command, false);
  });

  it("restarts a participant's kernel once at a time and shows a refusal", async () => {
    const lab = new ConsoleLab();
    const model = await started(lab);
    lab.hold = true;
    const first = model.restartKernel("nb-ada");
    assert.deepEqual(model.getState().restarting, ["nb-ada"]);
    assert.equal(await model.restartKernel("nb-ada"), false, "a second press while the first is out sends nothing");
    lab.release();
    assert.equal(await first, true);
    assert.deepEqual(model.getState().restarting, []);
    assert.deepEqual(lab.restarted, ["nb-ada"]);
    lab.hold = false;
    assert.equal(await model.restartKernel("nb-nobody"), false);
    assert.equal(model.getState().error, "Restarting the kernel failed: notebook nb-nobody not found");
  });
});

describe("workshop console: words", () => {
  it("heads the console with the join link, times, resources, state and steps", () => {
    const view = consoleView({
      workshop: { ...consoleView().workshop, startsAt: "2026-11-26T09:00:00Z", endsAt: "2026-11-26T12:30:00Z", pace: "led", revealedSteps: 2 },
      roster: [row("Ada"), row("Bo", { queuePosition: 1, kernel: "waiting", notebook: null })],
    });
    const header = consoleHeader(view, "http://lab.test/", "/api/workshops/ws-1/summary.csv", "UTC");
    assert.equal(header.joinUrl, "http://lab.test/join/K7Q2MNPR");
    assert.equal(header.starts, "starts 26 Nov 2026, 09:00");
    assert.equal(header.ends, "ends 26 Nov 2026, 12:30");
    assert.equal(header.state, "open");
    assert.equal(header.reveal, "step 2 of 6 revealed");
    assert.equal(header.canRevealNext, true);
    assert.deepEqual([header.admitted, header.waiting, header.capacity], [1, 1, 60]);
    assert.equal(header.summaryHref, "/api/workshops/ws-1/summary.csv");

    const untimed = consoleHeader(consoleView(), "http://lab.test", "/x", "UTC");
    assert.equal(untimed.starts, "started when created");
    assert.equal(untimed.ends, "no end time (end it here)");
    assert.equal(untimed.reveal, "self-paced: every step is open");
    assert.equal(untimed.canRevealNext, false, "self-paced: nothing to reveal");

    const allRevealed = consoleView({ workshop: { ...consoleView().workshop, pace: "led", revealedSteps: 6 } });
    assert.equal(consoleHeader(allRevealed, "", "/x").canRevealNext, false);
    const ended = consoleView({ workshop: { ...consoleView().workshop, closedAt: "2026-11-26T10:00:00Z", endedAt: "2026-11-26T10:00:00Z" } });
    assert.equal(consoleHeader(ended, "", "/x", "UTC").ends, "ended 26 Nov 2026, 10:00");
    assert.equal(roomState(ended.workshop), "ended");
    assert.equal(revealText({ pace: "led", revealedSteps: 1 }, 0), "1 step revealed");
    assert.equal(formatWhen("not a time"), "not a time");
  });

  it("says where each participant is, their kernel, verdicts and predictions", () => {
    const card = rosterCard(
      row("Ada", {
        online: false,
        step: { index: 1, count: 6, title: "Equivalence" },
        kernel: "hung",
        lastVerdict: { at: "2026-11-26T09:30:00Z", scenarioId: "dp-basics", claims: {}, counts: { holds: 3, "does-not-hold": 1, partly: 0, inconclusive: 2 } },
        predictions: { "dp-basics/split": "uneven chunks", "dp-basics/scaling": "linear" },
      }),
    );
    assert.equal(card.step, "step 2 of 6: Equivalence");
    assert.equal(card.online, false);
    assert.deepEqual([card.kernelLabel, card.kernelTone], ["hung", "bad"]);
    assert.deepEqual(card.verdicts?.map((v) => `${v.count} ${v.words}`), ["3 holds", "1 does not hold", "2 inconclusive"]);
    assert.equal(card.predictions, 2);
    assert.equal(card.notebook?.href, "/notebooks/nb-ada?peek=1");
    assert.equal(card.canRestart, true);
    assert.equal(rosterCard(row("Ada"), true).canRestart, false, "an ended workshop's kernels are shut down for good");

    const waiting = rosterCard(row("Bo", { queuePosition: 2, kernel: "waiting", notebook: null }));
    assert.equal(waiting.queue, "waiting: 2nd in the queue");
    assert.equal(waiting.step, null);
    assert.equal(waiting.canRestart, false);
    assert.equal(rosterCard(row("Cy")).step, "no step run yet");
    // On a copy where nothing ran yet: the first step, and that it has not run; after running: which one ran.
    assert.equal(rosterCard(row("Di", { step: { index: 0, count: 6, title: "Split", ran: false } })).step, "step 1 of 6: Split (not run yet)");
    assert.equal(rosterCard(row("Ed", { step: { index: 2, count: 6, title: "Replication", ran: true } })).step, "step 3 of 6: Replication (ran)");
    assert.deepEqual(["not-started", "waiting", "starting", "idle", "busy", "hung", "dead", "shutdown"].map((s) => kernelLook(s as RosterRow["kernel"]).tone), ["none", "none", "busy", "ok", "busy", "bad", "bad", "none"]);
    assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal), ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]);
  });

  it("draws each choice's predicted and measured bars against the question's longest", () => {
    const card = tallyCard(tally({ predicted: [1, 3, 0], measured: [4, 0, 0], undecided: 2 }));
    assert.deepEqual(
      card.bars.map((b) => [b.predicted, b.measured, b.predictedWidth, b.measuredWidth]),
      [
        [1, 4, 25, 100],
        [3, 0, 75, 0],
        [0, 0, 0, 0],
      ],
    );
    assert.deepEqual([card.predictedTotal, card.measuredTotal, card.undecided], [4, 4, 2]);
    assert.deepEqual(tallyCard(tally({ predicted: [0, 0, 0], measured: [0, 0, 0] })).bars.map((b) => b.predictedWidth), [0, 0, 0]);
  });
});

describe("workshops list: the console link and the new-workshop form's plan", () => {
  it("links each workshop to its console and says who is still waiting for a place", () => {
    const view: WorkshopView = {
      id: "ws 1",
      title: "Monday",
      joinCode: "K7Q2",
      scenarioIds: [],
      closedAt: null,
      endedAt: "2026-11-26T10:00:00Z",
      startsAt: null,
      endsAt: null,
      createdAt: "2026-11-26T09:00:00Z",
      pace: "self",
      capacity: 60,
      sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] },
      participants: [
        { id: "p-ada", name: "Ada", waiting: false, notebooks: [] },
        { id: "p-bo", name: "Bo", waiting: true, notebooks: [] },
      ],
    };
    const card = workshopCard(view, "http://lab.test", null);
    assert.equal(card.consoleHref, "/workshops/ws%201");
    assert.equal(card.ended, true);
    assert.deepEqual(card.participants.map((p) => [p.name, p.waiting]), [["Ada", false], ["Bo", true]]);
  });

  it("turns datetime-local values into ISO times with this zone's offset", () => {
    const iso = localDateTimeToIso("2026-11-26T09:00");
    assert.ok(iso !== null);
    assert.match(iso, /^2026-11-26T09:00:00[+-]\d{2}:\d{2}$/);
    assert.equal(Date.parse(iso), new Date(2026, 10, 26, 9, 0).getTime());
    assert.equal(Date.parse(localDateTimeToIso("2026-07-01T18:45:30")!), new Date(2026, 6, 1, 18, 45, 30).getTime(), "summer time has its own offset");
    assert.equal(localDateTimeToIso("2026-02-31T09:00"), null);
    assert.equal(localDateTimeToIso("tomorrow"), null);
    assert.equal(localDateTimeToIso(""), null);
  });

  it("checks the plan's fields and sends them with the workshop; without them the server's defaults hold", async () => {
    assert.deepEqual(newWorkshopOptions(DEFAULT_WORKSHOP_FIELDS), { ok: true, options: { pace: "self", capacity: 60, gpusPerParticipant: 0 } });
    assert.deepEqual(newWorkshopOptions({ ...DEFAULT_WORKSHOP_FIELDS, startsAt: "2026-11-26T10:00", endsAt: "2026-11-26T09:00" }), { ok: false, error: "the end must be after the start" });
    assert.deepEqual(newWorkshopOptions({ ...DEFAULT_WORKSHOP_FIELDS, capacity: "0" }), { ok: false, error: "the capacity is a whole number from 1 to 500" });
    assert.deepEqual(newWorkshopOptions({ ...DEFAULT_WORKSHOP_FIELDS, gpusPerParticipant: "-1" }), { ok: false, error: "GPUs per participant is a whole number from 0 (CPU emulation) to 64" });
    assert.deepEqual(newWorkshopOptions({ ...DEFAULT_WORKSHOP_FIELDS, startsAt: "2026-13-01T10:00" }), { ok: false, error: "the start is not a date and time" });

    const sent: LabCommand[] = [];
    const answer = (command: LabCommand): LabAnswer<LabOp> => {
      labCommandSchema.parse(command);
      sent.push(command);
      if (command.op !== "create-workshop") return { ok: true };
      const made: WorkshopView = { id: "ws-9", title: command.title, joinCode: "ABCD", scenarioIds: command.scenarioIds, closedAt: null, endedAt: null, startsAt: command.startsAt ?? null, endsAt: command.endsAt ?? null, createdAt: "2026-11-26T09:00:00Z", pace: "self", capacity: 60, sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] }, participants: [] };
      return { ok: true, workshop: made };
    };
    const lab = {
      send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
        return Promise.resolve(labAnswerOf<Op>(command.op, answer(command)));
      },
      onConnect() {},
      close() {},
    };
    const workshops = new WorkshopsController(lab, 60_000);
    const fields = { startsAt: "2026-11-26T09:00", endsAt: "2026-11-26T12:00", capacity: "24", gpusPerParticipant: "1", pace: "led" as const };
    assert.ok(await workshops.create("Tuesday", ["dp-basics"], fields));
    const create = sent.find((c) => c.op === "create-workshop");
    assert.ok(create?.op === "create-workshop");
    assert.deepEqual([create.capacity, create.gpusPerParticipant, create.pace], [24, 1, "led"]);
    assert.equal(Date.parse(create.startsAt!), new Date(2026, 10, 26, 9, 0).getTime());
    assert.equal(await workshops.create("Tuesday", ["dp-basics"], { ...fields, capacity: "many" }), null);
    assert.equal(workshops.getState().error, "Creating the workshop failed: the capacity is a whole number from 1 to 500");
    assert.ok(await workshops.create("Plain", ["dp-basics"]));
    const plain = sent.filter((c) => c.op === "create-workshop").at(-1);
    assert.deepEqual(plain, { op: "create-workshop", title: "Plain", scenarioIds: ["dp-basics"] });
  });
});
