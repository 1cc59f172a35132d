/**
 * The chaos run's schedule and checker (tests/chaos) on made-up records:
 * the schedule is a pure function of its seed and covers every kind of
 * fault; each rule of the checker finds what it is for (a run stored twice
 * or not at all, an ending no fault explains, a line a page showed that the
 * database lost, a page or console showing what is not stored), and lets
 * through what the lab promises (a kernel killed under its cell).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { check, documentDifferences, type CheckInput, type FaultRecord } from "../chaos/check";
import type { LabRecords, StoredCell, StoredExecution } from "../chaos/lab-records";
import { classifyAnswer, type CellRun, type RunRecord } from "../chaos/participant";
import { derivedSeed, FAULT_KINDS, makeSchedule, seededRandom } from "../chaos/schedule";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { RosterRow, WorkshopConsoleView } from "../../server/core/protocol/workshop-model";

describe("chaos schedule", () => {
  it("is the same for the same seed, another for another, and has every kind of fault", () => {
    const a = makeSchedule(7, 600_000);
    assert.deepEqual(makeSchedule(7, 600_000), a);
    assert.notDeepEqual(makeSchedule(8, 600_000), a);
    assert.equal(a.length, 30);
    for (const kind of FAULT_KINDS) assert.ok(a.some((fault) => fault.kind === kind), `${kind} is scheduled`);
    const short = makeSchedule(7, 120_000);
    assert.equal(short.length, FAULT_KINDS.length, "a short run has one of each kind");
    assert.deepEqual(new Set(short.map((fault) => fault.kind)), new Set(FAULT_KINDS));
  });

  it("fires in order, within the run, leaving its last tenth to settle", () => {
    for (const seed of [1, 2, 3, 99]) {
      const schedule = makeSchedule(seed, 600_000);
      schedule.forEach((fault, i) => {
        assert.ok(fault.atMs >= 0 && fault.atMs < 540_000, `fault ${fault.index} at ${fault.atMs}`);
        if (i > 0) assert.ok(fault.atMs > schedule[i - 1]!.atMs);
        assert.ok(fault.pick >= 0 && fault.pick < 1);
      });
    }
  });

  it("gives each participant its own stream of choices", () => {
    const first = seededRandom(derivedSeed(5, 0));
    const second = seededRandom(derivedSeed(5, 1));
    assert.notEqual(first(), second());
    assert.equal(seededRandom(derivedSeed(5, 0))(), seededRandom(derivedSeed(5, 0))());
  });
});

const NOTEBOOK = "nb-1";
const T0 = 1_000_000;

function sleepy(tag: string, cellId = "c1"): CellRun {
  return { cellId, kind: "sleepy", source: `# ${tag}`, lines: [`${tag} line 0`, `${tag} line 1`], result: null, minMs: 800 };
}

function runOf(cells: CellRun[], answer: RunRecord["answer"] = { kind: "ok" }, sentAt = T0): RunRecord {
  return { participant: 0, notebookId: NOTEBOOK, tag: cells.map((cell) => cell.lines[0]!.slice(0, 8)).join("+"), cells, sentAt, answeredAt: sentAt + 5, answer, shown: null, boundHit: null };
}

function executionOf(cell: CellRun, overrides: Partial<StoredExecution> = {}): StoredExecution {
  return {
    id: `e-${cell.lines[0]!.slice(0, 8)}`,
    runId: "run-1",
    notebookId: NOTEBOOK,
    cellId: cell.cellId,
    source: cell.source,
    status: "ok",
    queuedAt: T0 + 10,
    startedAt: T0 + 20,
    endedAt: T0 + 1_500,
    durationMs: 1_000,
    outputs: [{ kind: "stream", name: "stdout", text: cell.lines.map((line) => `${line}\n`).join("") }],
    ...overrides,
  };
}

function recordsOf(executions: StoredExecution[], extra: Partial<LabRecords> = {}): LabRecords {
  return { executions, runs: [{ id: "run-1", notebookId: NOTEBOOK, status: "running", exitReason: null, kernelPid: 4242, startedAt: T0, endedAt: null }], cells: [], predictions: [], malformed: [], ...extra };
}

function inputOf(runs: RunRecord[], records: LabRecords, extra: Partial<CheckInput> = {}): CheckInput {
  return { runs, predictions: [], seen: [], faults: [], records, pages: [], console: { live: emptyConsole(), fresh: emptyConsole(), boundHit: null }, participants: [{ index: 0, userId: "u-1", notebookId: NOTEBOOK }], ...extra };
}

function emptyConsole(): WorkshopConsoleView {
  return {
    workshop: { id: "w", title: "t", joinCode: "c", scenarioIds: [], startsAt: null, endsAt: null, closedAt: null, endedAt: null, pace: "self", revealedSteps: 1, plan: { hostId: null, gpusPerParticipant: 0, capacity: 20 }, resources: "CPU", sizing: { verdict: "fits", summary: "", details: [], advice: [] } },
    steps: {},
    roster: [],
    tallies: [],
    broadcasts: [],
    computedAt: new Date(T0).toISOString(),
  };
}

const checksOf = (input: CheckInput): string[] => check(input).violations.map((violation) => `${violation.check}: ${violation.what}`);

describe("chaos checker", () => {
  it("passes a run taken once, ended ok, with its lines stored once", () => {
    const cell = sleepy("P01 r001");
    const seen = cell.lines.map((line) => ({ line, cellId: "c1", executionId: "e-P01 r001", participant: 0, notebookId: NOTEBOOK }));
    const result = check(inputOf([runOf([cell])], recordsOf([executionOf(cell)]), { seen }));
    assert.deepEqual(result.violations, []);
    assert.equal(result.figures.linesSeen, 2);
    assert.equal(result.figures.linesStored, 2);
  });

  it("finds a run the server took that has no execution, or two", () => {
    const cell = sleepy("P01 r001");
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([]))).join("\n"), /took 1 run\(s\), the database has 0/);
    const twice = recordsOf([executionOf(cell), executionOf(cell, { id: "e-again" })]);
    assert.match(checksOf(inputOf([runOf([cell])], twice)).join("\n"), /2 execution\(s\) stored for 1 run/);
  });

  it("allows at most one execution for an unanswered execute, and none for a refused one", () => {
    const cell = sleepy("P01 r001");
    const unknown = runOf([cell], { kind: "unknown", error: "no answer" });
    assert.deepEqual(checksOf(inputOf([unknown], recordsOf([]))), []);
    assert.deepEqual(checksOf(inputOf([unknown], recordsOf([executionOf(cell)]))), []);
    const refused = runOf([cell], { kind: "refused", error: "unavailable: try again" });
    assert.match(checksOf(inputOf([refused], recordsOf([executionOf(cell)]))).join("\n"), /the page was told: unavailable: try again/);
  });

  it("finds an execution nobody ran", () => {
    const cell = sleepy("P01 r001");
    assert.match(checksOf(inputOf([], recordsOf([executionOf(cell)]))).join("\n"), /was run by nobody/);
  });

  it("explains kernel-died by a kill of that kernel while the cell ran, and nothing else", () => {
    const cell = sleepy("P01 r001");
    const died = executionOf(cell, { status: "kernel-died", outputs: [{ kind: "stream", name: "stdout", text: `${cell.lines[0]}\n` }] });
    const kill: FaultRecord = { index: 3, kind: "kernel-kill", at: T0 + 700, endedAt: T0 + 700, detail: "", error: null, kernel: { participant: 0, notebookId: NOTEBOOK, pid: 4242 } };
    const explained = check(inputOf([runOf([cell])], recordsOf([died]), { faults: [kill] }));
    assert.deepEqual(explained.violations, []);
    assert.match(explained.explained[0]!, /kernel-died, its kernel \(pid 4242\) killed by fault #3/);
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([died]))).join("\n"), /kernel-died, and no fault of the run killed its kernel/);
    const otherKernel = { ...kill, kernel: { ...kill.kernel!, pid: 1 } };
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([died]), { faults: [otherKernel] })).join("\n"), /no fault of the run killed its kernel/);
    const later = { ...kill, at: T0 + 60_000 };
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([died]), { faults: [later] })).join("\n"), /no fault of the run killed its kernel/);
  });

  it("never lets 'interrupted' through on a lab whose kernels are on host agents, and says the stored reason", () => {
    const cell = sleepy("P01 r001");
    const interrupted = executionOf(cell, { status: "interrupted", outputs: [] });
    const records = recordsOf([interrupted], { runs: [{ id: "run-1", notebookId: NOTEBOOK, status: "interrupted", exitReason: "the lab server stopped", kernelPid: 4242, startedAt: T0, endedAt: T0 + 2 }] });
    assert.match(checksOf(inputOf([runOf([cell])], records)).join("\n"), /interrupted, and no fault of the run killed its kernel; the run's reason: the lab server stopped/);
  });

  it("finds a duration the kernel's clock cannot have, and a run still running", () => {
    const cell = sleepy("P01 r001");
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([executionOf(cell, { durationMs: 120 })]))).join("\n"), /stored 120 ms for a cell that sleeps 800 ms/);
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([executionOf(cell, { durationMs: 9_000 })]))).join("\n"), /sent only 1500 ms before it ended/);
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([executionOf(cell, { status: "running", endedAt: null, durationMs: null })]))).join("\n"), /still running in the database/);
  });

  it("finds a line a page showed that is stored nowhere, or twice, and lines out of place", () => {
    const cell = sleepy("P01 r001");
    const seen = [{ line: cell.lines[1]!, cellId: "c1", executionId: "e", participant: 0, notebookId: NOTEBOOK }];
    const lost = executionOf(cell, { outputs: [{ kind: "stream", name: "stdout", text: `${cell.lines[0]}\n` }] });
    const found = checksOf(inputOf([runOf([cell])], recordsOf([lost]), { seen })).join("\n");
    assert.match(found, /page showed "P01 r001 line 1"; the database has it nowhere/);
    assert.match(found, /ok, stored lines/);
    const doubled = executionOf(cell, { outputs: [{ kind: "stream", name: "stdout", text: `${cell.lines.join("\n")}\n${cell.lines[1]}\n` }] });
    assert.match(checksOf(inputOf([runOf([cell])], recordsOf([doubled]), { seen })).join("\n"), /the database has it 2 times/);
  });

  it("finds a page that showed an end the database does not have", () => {
    const cell = sleepy("P01 r001");
    const run = runOf([cell]);
    run.shown = [{ cellId: "c1", executionId: "e-P01 r001", runState: "idle", lastRun: { status: "aborted", durationMs: 0 }, text: "", result: null }];
    assert.match(checksOf(inputOf([run], recordsOf([executionOf(cell)]))).join("\n"), /the page showed aborted, the database says ok/);
    const older = sleepy("P01 r000");
    run.shown = [{ cellId: "c1", executionId: "e-P01 r000", runState: "idle", lastRun: { status: "aborted", durationMs: 0 }, text: "", result: null }];
    const found = checksOf(inputOf([run, runOf([older])], recordsOf([executionOf(cell), executionOf(older)]))).join("\n");
    assert.match(found, /which is another run's/);
  });

  it("compares a page's notebook with the stored one", () => {
    const stored: StoredCell = { notebookId: NOTEBOOK, id: "c1", source: "1+1", outputs: [{ kind: "result", executionCount: 1, data: { "text/plain": "2" } }], executionCount: 1, lastRun: { status: "ok", durationMs: 3 }, lastExecutionId: "e1" };
    const doc: NotebookDocument = {
      id: NOTEBOOK,
      title: "t",
      deleted: false,
      kernel: { state: "not-started" },
      predictions: {},
      kernelSpec: { hostId: "local", gpus: 0 },
      cells: [{ id: "c1", kind: "code", source: "1+1", outputs: stored.outputs, executionCount: 1, runState: "idle", liveMetrics: null, lastRun: { status: "ok", durationMs: 3 }, executionId: "e1", template: null }],
    };
    assert.deepEqual(documentDifferences(doc, [stored], []), []);
    const busy = { ...doc, cells: [{ ...doc.cells[0]!, runState: "running" as const, lastRun: { status: "aborted" as const, durationMs: 0 } }] };
    assert.deepEqual(documentDifferences(busy, [stored], [{ notebookId: NOTEBOOK, userId: "u", questionId: "q1", choice: "yes" }]), [
      "cell c1: shows running",
      "cell c1: shows last run aborted, stored ok",
      "prediction q1: shows none, stored yes",
    ]);
  });

  it("counts predictions in the console's tallies and roster", () => {
    const prediction = { participant: 0, userId: "u-1", notebookId: NOTEBOOK, questionId: "q1", choice: "yes", answer: { kind: "ok" as const } };
    const stored = { notebookId: NOTEBOOK, userId: "u-1", questionId: "q1", choice: "yes" };
    const row: RosterRow = { participantId: "u-1", name: "P1", joinedAt: new Date(T0).toISOString(), queuePosition: null, online: true, notebook: null, step: null, kernel: "idle", lastVerdict: null, predictions: { q1: "yes" } };
    const view: WorkshopConsoleView = { ...emptyConsole(), tallies: [{ questionId: "q1", scenarioId: "s", text: "?", choices: ["yes", "no"], claims: [], predicted: [1, 0], measured: [0, 0], undecided: 0, participants: [] }], roster: [row] };
    assert.deepEqual(checksOf(inputOf([], recordsOf([], { predictions: [stored] }), { predictions: [prediction], console: { live: view, fresh: view, boundHit: null } })), []);
    const stale = { ...view, tallies: [{ ...view.tallies[0]!, predicted: [0, 0] }] };
    assert.match(checksOf(inputOf([], recordsOf([], { predictions: [stored] }), { predictions: [prediction], console: { live: stale, fresh: view, boundHit: null } })).join("\n"), /the console kept open: tally q1 "yes" counts 0, the database has 1/);
    assert.match(checksOf(inputOf([], recordsOf([]), { predictions: [prediction], console: { live: view, fresh: view, boundHit: null } })).join("\n"), /committed, the database has none/);
  });

  it("takes the page's own words for an execute that got no answer as 'may have run'", () => {
    assert.deepEqual(classifyAnswer({ ok: true }), { kind: "ok" });
    assert.equal(classifyAnswer({ ok: false, code: "unavailable", error: "no answer from the server (timed out or disconnected)" }).kind, "unknown");
    assert.equal(classifyAnswer({ ok: false, code: "unavailable", error: "lab server 1a2b did not answer within 10000 ms" }).kind, "unknown", "the driver's reply may be what was lost");
    assert.equal(classifyAnswer({ ok: false, code: "unavailable", error: "not connected to the server" }).kind, "refused");
    assert.equal(classifyAnswer({ ok: false, code: "unavailable", error: "the lab's servers cannot reach each other (Redis: The client is offline)" }).kind, "refused");
    assert.equal(classifyAnswer(null).kind, "refused");
  });
});
