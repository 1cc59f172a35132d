/**
 * The facilitator console's numbers, computed without a database: steps of
 * a scenario notebook, the roster (queue places, current step, kernel,
 * verdicts), the class tallies of predictions against what each
 * participant's own run measured, and the class summary CSV made from them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { furthestStepRun, hiddenCells, notebookSteps, stepOfEachCell, stepTitle, type StepCell } from "../../server/core/notebook/workshop-steps";
import { measuredChoice } from "../../server/core/notebook/measured-choice";
import type { PredictQuestion } from "../../server/core/protocol/notebook-model";
import type { VerdictReport, VerdictValue } from "../../server/core/protocol/verdict-model";
import type { WorkshopSettings } from "../../server/core/protocol/workshop-model";
import { consoleView, judgedOf, queuePositions, type CopyFacts, type ParticipantFacts } from "../../server/workshops/console-view";
import { classSummaryCsv, csvField } from "../../server/workshops/class-summary";

/** The shape of a dp-basics copy: intro, then per step "about", code, "explain"; verdicts last. */
function scenarioCells(ran: string[] = []): StepCell[] {
  const cells: StepCell[] = [{ id: "c-intro", kind: "markdown", template: { id: "dp-basics/intro" }, executionCount: null }];
  for (const step of ["split", "equivalence", "scaling"]) {
    cells.push({ id: `c-about-${step}`, kind: "markdown", template: { id: `dp-basics/about-${step}` }, executionCount: null });
    cells.push({ id: `c-${step}`, kind: "code", template: { id: `dp-basics/${step}` }, executionCount: ran.includes(step) ? 1 : null });
    cells.push({ id: `c-explain-${step}`, kind: "markdown", template: { id: `dp-basics/explain-${step}` }, executionCount: null });
  }
  cells.push({ id: "c-verdicts", kind: "code", template: { id: "dp-basics/verdicts" }, executionCount: ran.includes("verdicts") ? 2 : null });
  return cells;
}

const SPLIT: PredictQuestion = {
  id: "dp-basics/split",
  text: "With batch_size=64 on 4 devices, how many rows does each device get?",
  choices: ["the same number on every device", "uneven chunks", "random"],
  claims: ["splits-evenly"],
  outcomes: [{ "splits-evenly": ["holds"] }, { "splits-evenly": ["partly"] }, {}],
};

function report(verdicts: Record<string, VerdictValue | null>, scope: VerdictReport["scope"] = "scenario", failed: string | null = null): VerdictReport {
  return {
    scope,
    scenario: "dp-basics",
    title: "DataParallel basics",
    source: "004.txt",
    deviceMode: "2× cpu",
    params: {},
    experiments: [],
    claims: Object.entries(verdicts).map(([id, verdict]) => ({
      id,
      quote: "q",
      experiment: "split",
      verdict,
      status: verdict !== null ? ("measured" as const) : failed !== null ? ("failed" as const) : ("needs-run" as const),
      explanation: verdict !== null ? "because" : (failed ?? "Run the cell 'Batch split and gather'"),
      numbers: [],
    })),
  };
}

const SETTINGS: WorkshopSettings = {
  id: "w1",
  title: "GPU day",
  joinCode: "ABCDEFGH",
  scenarioIds: ["dp-basics"],
  startsAt: null,
  endsAt: null,
  closedAt: null,
  endedAt: null,
  pace: "led",
  revealedSteps: 1,
  plan: { hostId: null, gpusPerParticipant: 0, capacity: 2 },
  resources: "CPU emulation",
  sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] },
};

function copy(overrides: Partial<CopyFacts> = {}): CopyFacts {
  return { id: "nb", title: "DataParallel basics", scenarioId: "dp-basics", updatedAt: new Date(1_000), cells: scenarioCells(), questions: [SPLIT], judged: null, kernel: "idle", ...overrides };
}

function participant(id: string, overrides: Partial<ParticipantFacts> = {}): ParticipantFacts {
  return { id, name: id.toUpperCase(), joinedAt: new Date(0), waitingSince: null, online: true, copies: [copy({ id: `nb-${id}` })], predictions: [], ...overrides };
}

describe("workshop steps", () => {
  it("a step is a templated code cell; other cells belong to the next one, and the tail to the last", () => {
    const cells = scenarioCells();
    assert.deepEqual(notebookSteps(cells).map((step) => step.title), ["Split", "Equivalence", "Scaling", "Verdicts"]);
    // intro, about-split, split → 0; explain-split, about-equivalence, equivalence → 1; …
    assert.deepEqual(stepOfEachCell(cells), [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3]);
    assert.equal(stepTitle("dp-basics/large-model"), "Large model");
  });

  it("hides the cells of steps not revealed, and nothing once all are", () => {
    const cells = scenarioCells();
    assert.deepEqual([...hiddenCells(cells, 1)].sort(), cells.slice(3).map((cell) => cell.id).sort());
    assert.equal(hiddenCells(cells, 2).has("c-equivalence"), false);
    assert.equal(hiddenCells(cells, 2).has("c-scaling"), true);
    assert.equal(hiddenCells(cells, 4).size, 0);
    assert.equal(hiddenCells([{ id: "plain", kind: "code", template: null, executionCount: null }], 1).size, 0);
  });

  it("the furthest step run is the last step cell that has an execution count", () => {
    assert.equal(furthestStepRun(scenarioCells()), null);
    assert.equal(furthestStepRun(scenarioCells(["split", "scaling"])), 2);
    assert.equal(furthestStepRun(scenarioCells(["verdicts"])), 3);
  });
});

describe("measured choice", () => {
  it("judges the choice whose outcome the verdicts meet, and says why it cannot", () => {
    assert.deepEqual(measuredChoice(SPLIT.choices, SPLIT.outcomes, () => "holds"), { kind: "judged", measured: "the same number on every device" });
    assert.deepEqual(measuredChoice(SPLIT.choices, SPLIT.outcomes, () => "partly"), { kind: "judged", measured: "uneven chunks" });
    assert.equal(measuredChoice(SPLIT.choices, SPLIT.outcomes, () => "inconclusive").kind, "undecided");
    assert.equal(measuredChoice(SPLIT.choices, SPLIT.outcomes, () => null).kind, "undecided");
    assert.equal(measuredChoice(SPLIT.choices, SPLIT.outcomes, () => "does-not-hold").kind, "undecided");
    assert.equal(measuredChoice(SPLIT.choices, undefined, () => "holds").kind, "unjudged");
  });
});

describe("console view", () => {
  it("numbers the admission queue first come, first served", () => {
    const positions = queuePositions([
      { id: "late", waitingSince: new Date(3_000) },
      { id: "in", waitingSince: null },
      { id: "early", waitingSince: new Date(1_000) },
    ]);
    assert.deepEqual([...positions.entries()], [["early", 1], ["late", 2]]);
  });

  it("shows each participant's step, kernel and verdicts, and a waiting one with their place and no notebook", () => {
    const view = consoleView({
      workshop: SETTINGS,
      participants: [
        participant("ada", { copies: [copy({ id: "nb-ada", cells: scenarioCells(["split", "verdicts"]), kernel: "busy", judged: judgedOf([{ at: new Date(5_000), report: report({ "splits-evenly": "holds", "not-linear": "inconclusive" }) }]) })] }),
        participant("bo", { waitingSince: new Date(2_000), copies: [] }),
      ],
      broadcasts: [],
      now: new Date(9_000),
    });
    const [ada, bo] = view.roster;
    assert.deepEqual(ada!.step, { index: 3, count: 4, title: "Verdicts", ran: true });
    assert.equal(ada!.kernel, "busy");
    assert.deepEqual(ada!.lastVerdict?.counts, { holds: 1, "does-not-hold": 0, partly: 0, inconclusive: 1 });
    assert.equal(ada!.notebook?.id, "nb-ada");
    assert.equal(bo!.queuePosition, 1);
    assert.equal(bo!.kernel, "waiting");
    assert.equal(bo!.notebook, null);
    assert.deepEqual(view.steps["dp-basics"]!.map((step) => step.id), ["dp-basics/split", "dp-basics/equivalence", "dp-basics/scaling", "dp-basics/verdicts"]);
    assert.equal(view.computedAt, new Date(9_000).toISOString());
  });

  it("the current copy is the one opened or touched last: right after joining, the one they opened", () => {
    // Every copy is made when they join (the last one made looks newest); they open the first scenario.
    const copies = [copy({ id: "first", updatedAt: new Date(1_000) }), copy({ id: "second", scenarioId: "hangs", updatedAt: new Date(1_001) })];
    const opened = consoleView({
      workshop: { ...SETTINGS, scenarioIds: ["dp-basics", "hangs"] },
      participants: [participant("ada", { copies, opened: { notebookId: "first", at: new Date(1_500) } })],
      broadcasts: [],
      now: new Date(),
    });
    assert.equal(opened.roster[0]!.notebook?.id, "first");
    assert.equal(opened.roster[0]!.notebook?.scenarioId, "dp-basics");
    // Then they change something in the other copy: that is where they are.
    const moved = consoleView({
      workshop: { ...SETTINGS, scenarioIds: ["dp-basics", "hangs"] },
      participants: [participant("ada", { copies: [copies[0]!, { ...copies[1]!, updatedAt: new Date(5_000) }], opened: { notebookId: "first", at: new Date(1_500) } })],
      broadcasts: [],
      now: new Date(),
    });
    assert.equal(moved.roster[0]!.notebook?.id, "second");
  });

  it("right after joining, before anything is opened, the current copy is the first scenario's, not the one made last", () => {
    const joined = new Date(10_000);
    const view = consoleView({
      workshop: { ...SETTINGS, scenarioIds: ["dp-basics", "hangs"] },
      participants: [
        participant("ada", {
          copies: [
            copy({ id: "first", createdAt: joined, updatedAt: new Date(10_050) }),
            copy({ id: "second", scenarioId: "hangs", createdAt: new Date(10_100), updatedAt: new Date(10_400) }),
          ],
        }),
      ],
      broadcasts: [],
      now: new Date(),
    });
    assert.equal(view.roster[0]!.notebook?.id, "first");
  });

  it("the current copy is the one touched last", () => {
    const view = consoleView({
      workshop: { ...SETTINGS, scenarioIds: ["dp-basics", "hangs"] },
      participants: [participant("ada", { copies: [copy({ id: "first", updatedAt: new Date(1_000) }), copy({ id: "second", scenarioId: "hangs", updatedAt: new Date(2_000) })] })],
      broadcasts: [],
      now: new Date(),
    });
    assert.equal(view.roster[0]!.notebook?.id, "second");
  });

  it("tallies predictions beside what each participant's own run measured", () => {
    const view = consoleView({
      workshop: SETTINGS,
      participants: [
        participant("ada", { predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[0]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": "holds" }) }]) })] }),
        participant("bo", { predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[1]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": "partly" }) }]) })] }),
        participant("cy", { predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[1]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": "inconclusive" }) }]) })] }),
        participant("di"),
      ],
      broadcasts: [],
      now: new Date(),
    });
    const [tally] = view.tallies;
    assert.equal(tally!.questionId, SPLIT.id);
    assert.deepEqual(tally!.predicted, [1, 2, 0]);
    assert.deepEqual(tally!.measured, [1, 1, 0]);
    assert.equal(tally!.undecided, 1);
    assert.deepEqual(
      tally!.participants.map((entry) => [entry.participantId, entry.predicted, entry.measured]),
      [
        ["ada", SPLIT.choices[0], SPLIT.choices[0]],
        ["bo", SPLIT.choices[1], SPLIT.choices[1]],
        ["cy", SPLIT.choices[1], null],
      ],
    );
  });
});

describe("claims judged as each step ends", () => {
  it("an experiment cell's step report fills the tally before any verdicts cell ran", () => {
    const view = consoleView({
      workshop: SETTINGS,
      participants: [participant("ada", { predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[1]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": "partly" }, "step") }]) })] })],
      broadcasts: [],
      now: new Date(),
    });
    assert.deepEqual(view.tallies[0]!.measured, [0, 1, 0]);
    assert.equal(view.tallies[0]!.participants[0]!.measured, SPLIT.choices[1]);
    assert.deepEqual(view.roster[0]!.lastVerdict?.claims, { "splits-evenly": "partly" });
  });

  it("each claim keeps its latest judgement, whichever cell showed it", () => {
    const judged = judgedOf([
      { at: new Date(3), report: report({ "splits-evenly": null, "not-linear": null }) }, // the verdicts cell, with other values: needs a run
      { at: new Date(1), report: report({ "splits-evenly": "holds" }, "step") },
      { at: new Date(5), report: report({ "not-linear": "holds" }, "step") },
    ])!;
    assert.equal(judged.claims.get("splits-evenly")!.verdict, null);
    assert.equal(judged.claims.get("splits-evenly")!.status, "needs-run");
    assert.equal(judged.claims.get("not-linear")!.verdict, "holds");
    assert.equal(judged.at.getTime(), 5);
  });

  it("a failed experiment counts as not measured, with its reason, in the tally and the CSV", () => {
    const failure = "experiment failed: rank 0 failed first: KeyError: 'step_ms'";
    const view = consoleView({
      workshop: SETTINGS,
      participants: [participant("ada", { predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[0]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": null }, "step", failure) }]) })] })],
      broadcasts: [],
      now: new Date(),
    });
    const [tally] = view.tallies;
    assert.deepEqual(tally!.measured, [0, 0, 0]);
    assert.equal(tally!.undecided, 1);
    assert.equal(tally!.participants[0]!.notMeasured, failure);
    const row = classSummaryCsv(view).trimEnd().split("\r\n")[1]!;
    assert.ok(row.includes(`,,${failure.includes(",") ? `"${failure}"` : failure},splits-evenly=failed`), row);
  });
});

describe("class summary CSV", () => {
  it("one row per participant and question, right or wrong, with the claims' verdicts", () => {
    const view = consoleView({
      workshop: SETTINGS,
      participants: [
        participant("ada", { name: "Ada, \"the\" first", predictions: [{ questionId: SPLIT.id, choice: SPLIT.choices[1]! }], copies: [copy({ judged: judgedOf([{ at: new Date(1), report: report({ "splits-evenly": "holds" }) }]) })] }),
        participant("bo", { name: "=HYPERLINK(1)" }),
      ],
      broadcasts: [],
      now: new Date(),
    });
    const lines = classSummaryCsv(view).trimEnd().split("\r\n");
    assert.equal(lines[0], "workshop,scenario,question_id,question,participant,predicted,measured,prediction_right,not_measured_because,claim_verdicts");
    assert.equal(lines.length, 3);
    assert.equal(lines[1], `GPU day,dp-basics,dp-basics/split,"With batch_size=64 on 4 devices, how many rows does each device get?","Ada, ""the"" first",uneven chunks,the same number on every device,no,,splits-evenly=holds`);
    // A name a spreadsheet would run as a formula is quoted out of it.
    assert.match(lines[2]!, /,'=HYPERLINK\(1\),,,,not run yet,$/);
  });

  it("quotes fields as RFC 4180 says", () => {
    assert.equal(csvField("plain"), "plain");
    assert.equal(csvField("a,b"), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField("line\nbreak"), '"line\nbreak"');
    assert.equal(csvField("-1"), "'-1");
  });
});
