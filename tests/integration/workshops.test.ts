/**
 * Workshops through the real socket and HTTP edge, real sessions, real
 * kernels: admission up to the plan's capacity and a visible queue, the
 * same participant back after a dropped connection (also in a closed
 * room), kernels started ahead of time, steps revealed by the facilitator,
 * the console's live view (roster, predictions, restart of one kernel,
 * broadcasts), another facilitator's ids reading as missing, the class
 * summary CSV, and the end: kernels shut down, copies read-only but still
 * readable and exportable; an end time that passes ends it by itself.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { LabAnswer, LabOp } from "../../server/core/protocol/ops-lab";
import type { ParticipantWorkshopView, WorkshopConsoleView } from "../../server/core/protocol/workshop-model";
import { WORKSHOP_ENDED_REASON } from "../../server/workshops/workshops";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { joinWorkshop, labFetch, signIn } from "../helpers/lab-session";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";

/** Workshop pushes seen by one client, and a wait for the first that passes a test. */
class WorkshopEvents {
  readonly console: WorkshopConsoleView[] = [];
  readonly participant: ParticipantWorkshopView[] = [];
  private readonly waiters: Array<() => void> = [];

  constructor(client: TestClient) {
    client.socket.on("workshop:console", (_id, view) => this.push(this.console, view));
    client.socket.on("workshop:participant", (view) => this.push(this.participant, view));
  }

  private push<T>(list: T[], view: T): void {
    list.push(view);
    for (const wake of this.waiters.splice(0)) wake();
  }

  async consoleWhere(test: (view: WorkshopConsoleView) => boolean): Promise<WorkshopConsoleView> {
    return this.until(() => [...this.console].reverse().find(test));
  }

  async participantWhere(test: (view: ParticipantWorkshopView) => boolean): Promise<ParticipantWorkshopView> {
    return this.until(() => [...this.participant].reverse().find(test));
  }

  private async until<T>(find: () => T | undefined): Promise<T> {
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
  }
}

function ok<T extends LabAnswer<LabOp>>(reply: T): Extract<T, { ok: true }> {
  assert.ok(reply.ok, reply.ok ? "" : `${reply.code}: ${reply.error}`);
  return reply as Extract<T, { ok: true }>;
}

describe("workshops", () => {
  let harness: SocketHarness;
  let facilitator: TestClient;
  let facilitatorCookie: string;
  let otherFacilitator: TestClient;
  let member: TestClient;
  let consoleEvents: WorkshopEvents;
  let workshopId: string;
  let joinCode: string;
  const participants = new Map<string, { cookie: string; client: TestClient; events: WorkshopEvents }>();

  before(async () => {
    harness = await SocketHarness.start({ auth: { joinRateLimit: { max: 1000, windowSeconds: 60 } } });
    const { accounts } = harness.lab.access;
    for (const [name, role] of [["Fay", "facilitator"], ["Gus", "facilitator"], ["Mo", "member"]] as const) {
      await accounts.create({ name, email: `${name.toLowerCase()}@example.com`, password: PASSWORD, role });
    }
    facilitatorCookie = await signIn(harness.url, "fay@example.com", PASSWORD);
    facilitator = await harness.client(facilitatorCookie);
    otherFacilitator = await harness.client(await signIn(harness.url, "gus@example.com", PASSWORD));
    member = await harness.client(await signIn(harness.url, "mo@example.com", PASSWORD));
    consoleEvents = new WorkshopEvents(facilitator);
  });

  after(async () => {
    for (const { client } of participants.values()) client.close();
    for (const client of [facilitator, otherFacilitator, member]) client?.close();
    await harness?.close();
  });

  async function join(name: string, cookie?: string): Promise<{ cookie: string; client: TestClient; events: WorkshopEvents }> {
    const session = await joinWorkshop(harness.url, joinCode, name, cookie);
    const client = await harness.client(session);
    const events = new WorkshopEvents(client);
    const entry = { cookie: session, client, events };
    participants.set(name, entry);
    return entry;
  }

  async function notebooksOf(client: TestClient): Promise<string[]> {
    return (ok(await client.sendLab({ op: "list-notebooks" })).notebooks ?? []).map((notebook) => notebook.id);
  }

  it("a workshop's times and plan are checked when it is made", LIMIT, async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const refused = await facilitator.sendLab({ op: "create-workshop", title: "Too late", scenarioIds: ["dp-basics"], endsAt: past });
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? "" : refused.error, /end time is already past/);
    const badHost = await facilitator.sendLab({ op: "create-workshop", title: "Nowhere", scenarioIds: ["dp-basics"], hostId: "no-such-host" });
    assert.equal(badHost.ok, false);
    assert.match(badHost.ok ? "" : badHost.error, /no host "no-such-host"/);
    const badTime = await facilitator.sendLab({ op: "create-workshop", title: "Bad", scenarioIds: ["dp-basics"], startsAt: "tomorrow" });
    assert.equal(badTime.ok, false);
    assert.equal(badTime.ok ? "" : badTime.code, "invalid");
    // A class larger than the server's kernel cap (16 here) is told so, with what to change, on its card and its
    // console (the facilitator's only), before anyone arrives; the resources line a participant reads names no setting.
    const big = ok(await facilitator.sendLab({ op: "create-workshop", title: "Big class", scenarioIds: ["dp-basics"], startsAt: new Date(Date.now() + 86_400_000).toISOString(), capacity: 60 }));
    assert.equal(big.workshop!.sizing.verdict, "does-not-fit");
    const view = ok(await facilitator.sendLab({ op: "workshop-console", workshopId: big.workshop!.id })).console!;
    assert.match(view.workshop.resources, /^CPU emulation on host \S+ \(no GPU per participant\), for up to 60 participants$/);
    assert.equal(view.workshop.sizing.verdict, "does-not-fit");
    assert.match(view.workshop.sizing.details[0]!, /^Kernels: only 16 of the 60 participants can have a kernel: this lab server runs 16 at once/);
    assert.ok(view.workshop.sizing.advice.some((line) => line.startsWith("Lower this workshop's capacity to 16")), view.workshop.sizing.advice.join("\n"));
    const small = ok(await facilitator.sendLab({ op: "create-workshop", title: "Small class", scenarioIds: ["dp-basics"], startsAt: new Date(Date.now() + 86_400_000).toISOString(), capacity: 10 }));
    assert.notEqual(small.workshop!.sizing.verdict, "does-not-fit");
  });

  it("admits up to the capacity and queues the rest with their place; the same browser rejoining is the same participant", LIMIT, async () => {
    const made = ok(await facilitator.sendLab({ op: "create-workshop", title: "GPU day", scenarioIds: ["dp-basics"], capacity: 1, pace: "led" }));
    workshopId = made.workshop!.id;
    joinCode = made.workshop!.joinCode;
    const first = ok(await facilitator.sendLab({ op: "workshop-console", workshopId }));
    assert.equal(first.console!.workshop.plan.capacity, 1);
    assert.match(first.console!.workshop.resources, /CPU emulation/);

    const ada = await join("Ada");
    assert.equal((await notebooksOf(ada.client)).length, 1);
    const adaView = ok(await ada.client.sendLab({ op: "my-workshop" })).participantWorkshop!;
    assert.equal(adaView.state, "admitted");
    // A participant is never sent the plan's sizing, nor a setting's name.
    assert.doesNotMatch(JSON.stringify(adaView), /MGPULAB_|sizing|kernels at once/);

    const bo = await join("Bo");
    const boView = ok(await bo.client.sendLab({ op: "my-workshop" })).participantWorkshop!;
    assert.deepEqual([boView.state, boView.queuePosition], ["waiting", 1]);
    // Why they wait, in plain words.
    assert.match(boView.waitingBecause ?? "", /room for 1 at a time and every place is taken/);
    assert.deepEqual(await notebooksOf(bo.client), [], "no copies while waiting");
    // Nor through the scenario list: the queue cannot be skipped.
    const skipped = await bo.client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
    assert.deepEqual(skipped.ok ? null : [skipped.code, skipped.error], ["forbidden", "you are still in the admission queue: your notebooks open when a seat is free"]);

    // Another tab, or back after the Wi-Fi dropped: the same cookie is the same participant.
    const again = await joinWorkshop(harness.url, joinCode, "Bo (again)", bo.cookie);
    assert.equal(again, bo.cookie);
    const roster = await consoleEvents.consoleWhere((view) => view.roster.length === 2 && view.roster.some((row) => row.queuePosition === 1));
    assert.deepEqual(roster.roster.map((row) => [row.name, row.queuePosition]), [["Ada", null], ["Bo", 1]]);

    // Ada's kernel was started ahead of time (the workshop has no start time: now).
    await consoleEvents.consoleWhere((view) => view.roster.find((row) => row.name === "Ada")?.kernel === "idle");

    ok(await facilitator.sendLab({ op: "update-workshop", workshopId, capacity: 2 }));
    const admitted = await bo.events.participantWhere((view) => view.state === "admitted");
    assert.equal(admitted.queuePosition, null);
    assert.equal((await notebooksOf(bo.client)).length, 1);
  });

  it("concurrent joins fill exactly the free seats, first come first served", LIMIT, async () => {
    const made = ok(await facilitator.sendLab({ op: "create-workshop", title: "Rush", scenarioIds: ["dp-basics"], capacity: 2, startsAt: new Date(Date.now() + 86_400_000).toISOString() }));
    const cookies = await Promise.all(["R1", "R2", "R3", "R4"].map((name) => joinWorkshop(harness.url, made.workshop!.joinCode, name)));
    const views = await Promise.all(cookies.map(async (cookie) => {
      const client = await harness.client(cookie);
      try {
        return ok(await client.sendLab({ op: "my-workshop" })).participantWorkshop!;
      } finally {
        client.close();
      }
    }));
    assert.deepEqual(views.map((view) => view.state).sort(), ["admitted", "admitted", "waiting", "waiting"]);
    assert.deepEqual(views.map((view) => view.queuePosition).filter((position) => position !== null).sort(), [1, 2]);
  });

  it("a closed room refuses newcomers but lets its participants back in", LIMIT, async () => {
    ok(await facilitator.sendLab({ op: "update-workshop", workshopId, closed: true }));
    await assert.rejects(joinWorkshop(harness.url, joinCode, "Cy"), /404.*no open workshop has this code/);
    const ada = participants.get("Ada")!;
    assert.equal(await joinWorkshop(harness.url, joinCode, "Ada", ada.cookie), ada.cookie);
    ok(await facilitator.sendLab({ op: "update-workshop", workshopId, closed: false }));
  });

  it("in a led workshop a participant runs only the revealed steps", LIMIT, async () => {
    const ada = participants.get("Ada")!;
    const [notebookId] = await notebooksOf(ada.client);
    const opened = await ada.client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const stepCells = opened.notebook.cells.filter((cell) => cell.kind === "code" && cell.template !== null);
    const second = stepCells[1]!;
    const refused = await ada.client.send({ op: "execute", notebookId, cellIds: [second.id] });
    assert.deepEqual(refused.ok ? null : [refused.code, refused.error], ["forbidden", "your facilitator has not revealed this step yet"]);
    ok(await facilitator.sendLab({ op: "update-workshop", workshopId, revealedSteps: 2 }));
    await ada.events.participantWhere((view) => view.revealedSteps === 2);
    const allowed = await ada.client.send({ op: "execute", notebookId, cellIds: [second.id] });
    assert.ok(allowed.ok, allowed.ok ? "" : allowed.error);
    await ada.client.send({ op: "interrupt", notebookId });
    await ada.client.waitFor((event) => event.type === "cell-finished" && event.cellId === second.id);
  });

  it("the console shows predictions live, restarts one participant's kernel, and broadcasts", LIMIT, async () => {
    const ada = participants.get("Ada")!;
    const [notebookId] = await notebooksOf(ada.client);
    const question = (await ada.client.send({ op: "open", notebookId }));
    assert.ok(question.ok && question.notebook);
    const asked = question.notebook.cells.find((cell) => cell.template?.question)!.template!.question!;
    const committed = await ada.client.send({ op: "commit-prediction", notebookId, questionId: asked.id, choice: asked.choices[1] });
    assert.ok(committed.ok);
    const shown = await consoleEvents.consoleWhere((view) => view.roster.find((row) => row.name === "Ada")?.predictions[asked.id] === asked.choices[1]);
    const tally = shown.tallies.find((entry) => entry.questionId === asked.id)!;
    assert.equal(tally.predicted[1], 1);

    const row = shown.roster.find((entry) => entry.name === "Ada")!;
    assert.equal(row.notebook?.id, notebookId);
    const before = ada.client.events.length;
    ok(await facilitator.sendLab({ op: "restart-kernel", notebookId }));
    await ada.client.waitFor((event) => ada.client.events.indexOf(event) >= before && event.type === "kernel-status" && event.status.state === "restarting");
    await ada.client.waitFor((event) => ada.client.events.indexOf(event) >= before && event.type === "kernel-status" && event.status.state === "idle");

    const badPreset = await facilitator.sendLab({ op: "workshop-broadcast", workshopId, preset: { scenarioId: "hangs", values: {} } });
    assert.equal(badPreset.ok, false);
    ok(await facilitator.sendLab({ op: "workshop-broadcast", workshopId, message: "Try batch_size=10 now", preset: { scenarioId: "dp-basics", values: { batch_size: 10 } } }));
    const heard = await ada.events.participantWhere((view) => view.broadcasts.length === 1);
    assert.equal(heard.broadcasts[0]!.message, "Try batch_size=10 now");
    assert.deepEqual(heard.broadcasts[0]!.preset, { scenarioId: "dp-basics", values: { batch_size: 10 } });
  });

  it("an experiment cell's claims are judged as it ends: the tally and the CSV fill in before any verdicts cell runs", LIMIT, async () => {
    const ada = participants.get("Ada")!;
    const [notebookId] = await notebooksOf(ada.client);
    const opened = await ada.client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const split = opened.notebook.cells.find((cell) => cell.template?.id === "dp-basics/split")!;
    const question = split.template!.question!;
    const verdicts = opened.notebook.cells.find((cell) => cell.template?.id === "dp-basics/verdicts")!;
    assert.equal(verdicts.executionCount, null, "the verdicts cell has not run");
    const ran = await ada.client.send({ op: "execute", notebookId, cellIds: [split.id], sourceHashes: { [split.id]: sourceHash(split.source) } });
    assert.ok(ran.ok, ran.ok ? "" : ran.error);
    // The cell ends with its own claims judged (a step report), and the console counts what Ada's run measured.
    const shown = await consoleEvents.consoleWhere((view) => (view.tallies.find((tally) => tally.questionId === question.id)?.measured.reduce((a, b) => a + b, 0) ?? 0) === 1);
    const tally = shown.tallies.find((entry) => entry.questionId === question.id)!;
    const adaId = shown.roster.find((row) => row.name === "Ada")!.participantId;
    const mine = tally.participants.find((entry) => entry.participantId === adaId)!;
    assert.ok(mine.measured !== null && question.choices.includes(mine.measured), JSON.stringify(mine));
    assert.deepEqual(shown.roster.find((row) => row.name === "Ada")!.step?.ran, true);
    const csv = await (await labFetch(`${harness.url}/api/workshops/${workshopId}/summary.csv`, {}, facilitatorCookie)).text();
    const row = csv.split("\r\n").find((line) => line.includes(",Ada,") && line.includes(question.id))!;
    assert.ok(row.includes(`,${mine.measured},`), row);
  });

  it("another facilitator's workshop reads as missing; other roles may not run workshops", LIMIT, async () => {
    const hidden = await otherFacilitator.sendLab({ op: "workshop-console", workshopId });
    assert.deepEqual(hidden.ok ? null : [hidden.code, hidden.error], ["not-found", `workshop ${workshopId} not found`]);
    const missing = await otherFacilitator.sendLab({ op: "workshop-console", workshopId: "cm0000000000000000guessed" });
    assert.deepEqual(missing.ok ? null : [missing.code, missing.error], ["not-found", "workshop cm0000000000000000guessed not found"]);
    const forbidden = await member.sendLab({ op: "update-workshop", workshopId, end: true });
    assert.equal(forbidden.ok ? "" : forbidden.code, "forbidden");
    const notInOne = await member.sendLab({ op: "my-workshop" });
    assert.equal(notInOne.ok ? "" : notInOne.code, "forbidden");
  });

  it("exports the class summary as CSV for its facilitator only", LIMIT, async () => {
    const response = await labFetch(`${harness.url}/api/workshops/${workshopId}/summary.csv`, {}, facilitatorCookie);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/csv/);
    assert.match(response.headers.get("content-disposition") ?? "", /GPU-day-summary\.csv/);
    const lines = (await response.text()).trimEnd().split("\r\n");
    assert.equal(lines[0], "workshop,scenario,question_id,question,participant,predicted,measured,prediction_right,not_measured_because,claim_verdicts");
    assert.ok(lines.some((line) => line.includes(",Ada,") && line.includes("dp-basics/split")), lines.join("\n"));
    const other = await labFetch(`${harness.url}/api/workshops/${workshopId}/summary.csv`, {}, await signIn(harness.url, "gus@example.com", PASSWORD));
    assert.equal(other.status, 404);
  });

  it("the end shuts the kernels down and leaves the copies readable, exportable and unchangeable", LIMIT, async () => {
    const ada = participants.get("Ada")!;
    const [notebookId] = await notebooksOf(ada.client);
    const before = ada.client.events.length;
    ok(await facilitator.sendLab({ op: "update-workshop", workshopId, end: true }));
    const stopped = await ada.client.waitFor((event) => ada.client.events.indexOf(event) >= before && event.type === "kernel-status" && event.status.state === "shutdown");
    assert.equal(stopped.type === "kernel-status" && stopped.status.state === "shutdown" ? stopped.status.reason : null, WORKSHOP_ENDED_REASON);
    assert.equal((await ada.events.participantWhere((view) => view.state === "ended")).state, "ended");
    assert.equal((await harness.lab.hub.kernels.list()).kernels.length, 0);

    const reopened = await ada.client.send({ op: "open", notebookId });
    assert.ok(reopened.ok);
    assert.equal(reopened.access, "read");
    const edit = await ada.client.send({ op: "set-source", notebookId, cellId: reopened.notebook!.cells[0]!.id, source: "changed", force: true });
    assert.equal(edit.ok, false);
    const exported = await labFetch(`${harness.url}/api/notebooks/${notebookId}/export`, {}, ada.cookie);
    assert.equal(exported.status, 200);
    const copied = await ada.client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics" });
    assert.equal(copied.ok ? "" : copied.code, "forbidden");
    const changed = await facilitator.sendLab({ op: "update-workshop", workshopId, capacity: 5 });
    assert.match(changed.ok ? "" : changed.error, /has ended/);
  });

  it("an end time that passes ends the workshop by itself", LIMIT, async () => {
    const endsAt = new Date(Date.now() + 1_500).toISOString();
    const made = ok(await facilitator.sendLab({ op: "create-workshop", title: "Short", scenarioIds: ["dp-basics"], endsAt }));
    const id = made.workshop!.id;
    ok(await facilitator.sendLab({ op: "workshop-console", workshopId: id }));
    const ended = await consoleEvents.consoleWhere((view) => view.workshop.id === id && view.workshop.endedAt !== null);
    assert.ok(Date.parse(ended.workshop.endedAt!) >= Date.parse(endsAt));
    await assert.rejects(joinWorkshop(harness.url, made.workshop!.joinCode, "Late"), /404/);
  });
});
