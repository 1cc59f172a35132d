/**
 * Predict first, then the verdicts: the prediction prompt before and after a
 * commit, predictions indexed by claim, and the verdict report as a cell
 * output (validated kernel output; malformed reports fall back to text),
 * all rendered to static HTML.
 */
// Before the components: they import their stylesheets.
import "../helpers/stylesheet-stub";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createElement, type ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import MimeOutput from "../../components/notebook/MimeOutput";
import PredictionPrompt from "../../components/notebook/PredictionPrompt";
import { judgePrediction, predictionsByClaim, PredictionsContext, type ClaimPrediction, type PredictionsByClaim } from "../../components/notebook/model/predictions";
import { VERDICTS_MIME } from "../../server/core/protocol/metrics-model";
import type { CellTemplate, Prediction, PredictQuestion } from "../../server/core/protocol/notebook-model";
import type { VerdictReport, VerdictValue } from "../../server/core/protocol/verdict-model";

const question: PredictQuestion = {
  id: "dp_basics/speedup",
  text: "With 2 devices, how much faster is one epoch?",
  choices: ["about 2× faster", "about the same", "slower"],
  claims: ["speedup", "overhead"],
};

const committed: Prediction = { questionId: question.id, choice: "about 2× faster", afterRun: false, committedAt: "2025-06-01T12:00:00.000Z" };

const noop = () => {};

function prompt(prediction: Prediction | null, disabled = false): string {
  return renderToStaticMarkup(createElement(PredictionPrompt, { question, prediction, disabled, onCommit: noop }));
}

/** Every opening tag carrying `data-testid="<id>"`. */
function tags(html: string, testId: string): string[] {
  return html.match(new RegExp(`<[a-z0-9]+[^>]*data-testid="${testId}"[^>]*>`, "g")) ?? [];
}

function has(tag: string, attribute: string): boolean {
  return new RegExp(`\\s${attribute}(="[^"]*")?[\\s/>]`).test(tag);
}

describe("PredictionPrompt", () => {
  it("asks the question with one radio per choice and a commit button that waits for a pick", () => {
    const html = prompt(null);
    assert.match(html, /Predict first:/);
    assert.match(html, /With 2 devices, how much faster is one epoch\?/);
    const radios = tags(html, "prediction-choice");
    assert.deepEqual(
      radios.map((r) => /value="([^"]*)"/.exec(r)?.[1]),
      question.choices,
    );
    for (const radio of radios) {
      assert.match(radio, /type="radio"/);
      assert.ok(!has(radio, "checked"), "nothing picked yet");
    }
    const names = new Set(radios.map((r) => /name="([^"]*)"/.exec(r)?.[1]));
    assert.equal(names.size, 1, "one radio group");
    // Each radio sits inside its label, so clicking the text picks it.
    assert.match(html, /<label class="prediction-choice"><input[^>]*value="slower"[^>]*\/><span class="markdown-text">slower<\/span><\/label>/);
    const [commit] = tags(html, "prediction-commit");
    assert.ok(commit?.startsWith("<button"));
    assert.ok(has(commit, "disabled"), "disabled until a choice is picked");
    assert.match(html, /kept and shown next to the measured verdict/);
    assert.equal(tags(html, "prediction-committed").length, 0);
  });

  it("disables the whole question while disabled", () => {
    assert.match(prompt(null, true), /<fieldset class="prediction-fieldset" disabled="">/);
    assert.doesNotMatch(prompt(null, false), /<fieldset[^>]*disabled/);
  });

  it("after a commit shows the answer and its time, with nothing left to edit", () => {
    const html = prompt(committed);
    const [shown] = tags(html, "prediction-committed");
    assert.ok(shown);
    assert.match(html, /You predicted: <strong>about 2× faster<\/strong>/);
    assert.match(html, /<time dateTime="2025-06-01T12:00:00.000Z">[^<]+<\/time>/);
    assert.match(html, /locked/);
    assert.equal(tags(html, "prediction-choice").length, 0);
    assert.equal(tags(html, "prediction-commit").length, 0);
    assert.doesNotMatch(html, /<input|<button/);
  });

  it("an answer given after the experiment ran says so, before and after the commit", () => {
    const before = renderToStaticMarkup(createElement(PredictionPrompt, { question, prediction: null, disabled: false, ranAlready: true, onCommit: noop }));
    assert.match(before, /already run here, so it will be marked as given afterwards/);
    assert.doesNotMatch(prompt(null), /already run here/);
    const after = prompt({ ...committed, afterRun: true });
    assert.match(after, /after the experiment had run; locked/);
    assert.doesNotMatch(prompt(committed), /after the experiment had run/);
  });

  it("does not take another question's prediction for this one's", () => {
    const html = prompt({ ...committed, questionId: "other/step" });
    assert.equal(tags(html, "prediction-committed").length, 0);
    assert.equal(tags(html, "prediction-choice").length, 3);
  });
});

function templated(id: string, q: PredictQuestion | null): { template: CellTemplate | null } {
  return { template: { id, parameters: {}, detached: false, fields: [], question: q } };
}

describe("predictionsByClaim", () => {
  it("indexes committed predictions by every claim their question is about, once per question", () => {
    const other: PredictQuestion = { id: "dp_basics/grads", text: "Same gradients?", choices: ["yes", "no"], claims: ["overhead"] };
    const unanswered: PredictQuestion = { id: "dp_basics/memory", text: "Memory?", choices: ["more", "less"], claims: ["memory"] };
    const cells = [
      { template: null },
      templated("dp_basics/a", question),
      templated("dp_basics/b", question),
      templated("dp_basics/c", other),
      templated("dp_basics/d", unanswered),
    ];
    const map = predictionsByClaim(cells, {
      [question.id]: committed,
      [other.id]: { questionId: other.id, choice: "no", afterRun: false, committedAt: "2025-06-01T12:05:00.000Z" },
      "gone/question": { questionId: "gone/question", choice: "x", afterRun: false, committedAt: "2025-06-01T12:06:00.000Z" },
    });
    assert.deepEqual([...map.keys()], ["speedup", "overhead"]);
    assert.deepEqual(map.get("speedup"), [
      { question: question.text, choice: "about 2× faster", committedAt: committed.committedAt, afterRun: false, choices: question.choices, outcomes: null },
    ]);
    assert.deepEqual(
      map.get("overhead")?.map((p) => p.choice),
      ["about 2× faster", "no"],
    );
    assert.equal(map.get("memory"), undefined);
  });
});

describe("judgePrediction", () => {
  const asked: ClaimPrediction = {
    question: "With 3 devices, what speed-up?",
    choice: "about 3x",
    committedAt: "2025-06-01T12:00:00.000Z",
    afterRun: false,
    choices: ["about 3x", "more than 1x but less than 3x", "none or a slowdown"],
    outcomes: [{ "myth-linear": ["holds"] }, { "not-linear": ["holds", "partly"], "myth-linear": ["does-not-hold"] }, {}],
  };
  const verdicts = (map: Record<string, VerdictValue | null>) => (claim: string) => map[claim] ?? null;

  it("names the choice the verdicts measured and whether the prediction was it", () => {
    assert.deepEqual(judgePrediction(asked, verdicts({ "myth-linear": "holds", "not-linear": "does-not-hold" })), { kind: "judged", measured: "about 3x", right: true });
    assert.deepEqual(judgePrediction(asked, verdicts({ "myth-linear": "does-not-hold", "not-linear": "holds" })), {
      kind: "judged",
      measured: "more than 1x but less than 3x",
      right: false,
    });
  });

  it("does not judge from an inconclusive or missing verdict", () => {
    assert.equal(judgePrediction(asked, verdicts({ "myth-linear": "inconclusive", "not-linear": "holds" })).kind, "undecided");
    assert.equal(judgePrediction(asked, verdicts({ "not-linear": "holds" })).kind, "undecided");
    assert.equal(judgePrediction(asked, verdicts({ "myth-linear": "partly", "not-linear": "partly" })).kind, "undecided");
    assert.deepEqual(judgePrediction(asked, verdicts({ "myth-linear": "does-not-hold", "not-linear": "partly" })), {
      kind: "judged",
      measured: "more than 1x but less than 3x",
      right: false,
    });
  });

  it("leaves a question without outcomes unjudged", () => {
    assert.deepEqual(judgePrediction({ ...asked, outcomes: null }, verdicts({ "myth-linear": "holds" })), { kind: "unjudged" });
  });
});

function numbers(count: number): VerdictReport["claims"][number]["numbers"] {
  return Array.from({ length: count }, (_, i) => ({ label: `samples_per_device[${i}]`, value: 16 }));
}

const report: VerdictReport = {
  scenario: "dp_basics",
  title: "DataParallel basics",
  source: "dataparallel-basics.md",
  deviceMode: "2× cpu, emulated DataParallel (threads in one process, 4 cores); DDP: 2× cpu, DDP over gloo (one process per rank, 4 cores)",
  params: { devices: 2, batch_size: 64, pin_memory: false, backend: "gloo" },
  experiments: [
    { id: "split", title: "Batch split", variants: ["single", "dp"], seconds: 1.5, error: null },
    { id: "speed", title: "Epoch time", variants: ["single", "dp"], seconds: 3.25, error: null },
    { id: "broken", title: "Memory per device", variants: ["dp"], seconds: 0.1, error: "RuntimeError: out of memory" },
  ],
  claims: [
    {
      id: "speedup",
      quote: "DataParallel makes training faster on multiple GPUs.",
      experiment: "speed",
      verdict: "does-not-hold",
      explanation: "One epoch took 1.92 s on 2 emulated devices against 1.10 s on one.",
      numbers: [
        { label: "single_s", value: 1.1 },
        { label: "dp_s", value: 1.923456 },
        { label: "speedup", value: 0.000571234 },
        { label: "steps", value: 125000 },
        { label: "converged", value: true },
        { label: "note", value: "threads share cores" },
        { label: "gpu_ms", value: null },
      ],
    },
    { id: "split", quote: "The batch is split evenly across devices.", experiment: "split", verdict: "holds", explanation: "Each device got 16 of 32 samples.", numbers: numbers(12) },
    { id: "overhead", quote: "Replication costs little.", experiment: "speed", verdict: "partly", explanation: "Replication took 12% of a step.", numbers: [] },
    { id: "memory", quote: "Memory is split too.", experiment: "broken", verdict: null, explanation: "experiment failed: no evidence (see the experiment's error)", numbers: [] },
  ],
};

function bundle(json: string, text = "verdicts as text"): Record<string, string> {
  return { [VERDICTS_MIME]: json, "text/plain": text };
}

function render(data: Record<string, string>, predictions: PredictionsByClaim = new Map()): string {
  const node: ReactNode = createElement(PredictionsContext, { value: predictions }, createElement(MimeOutput, { data }));
  return renderToStaticMarkup(node);
}

/** The markup of the claim card with this id. */
function claim(html: string, id: string): string {
  const start = html.indexOf(`data-claim-id="${id}"`);
  assert.ok(start >= 0, `claim ${id} rendered`);
  const end = html.indexOf("</article>", start);
  return html.slice(start, end);
}

describe("VerdictReport through MimeOutput", () => {
  const predictions = predictionsByClaim([templated("dp_basics/a", question)], { [question.id]: committed });
  const html = render(bundle(JSON.stringify(report)), predictions);

  it("renders the report instead of the text form, with an honest header", () => {
    assert.equal(tags(html, "verdict-report").length, 1);
    assert.doesNotMatch(html, /verdicts as text/);
    assert.match(html, /<h3[^>]*>DataParallel basics<\/h3>/);
    // A report from before sourceTitle names the file; one with it names the article (the file in the tooltip).
    assert.match(html, /<cite title="dataparallel-basics\.md">dataparallel-basics\.md<\/cite>/);
    const titled = render(bundle(JSON.stringify({ ...report, sourceTitle: "DataParallel basics in PyTorch" })));
    assert.match(titled, /<cite title="dataparallel-basics\.md">DataParallel basics in PyTorch<\/cite>/);
    const device = /data-testid="verdict-device">(.*?)<\/span><\/span>/.exec(html)?.[1] ?? "";
    assert.match(device, /2× cpu/);
    assert.match(device, /emulated on CPU, not real GPUs/);
    for (const chip of ["devices=2", "batch_size=64", "pin_memory=false", "backend=gloo"]) assert.match(html, new RegExp(`<li class="verdict-chip">${chip}</li>`));
  });

  it("does not call real GPUs emulated", () => {
    const gpu = render(bundle(JSON.stringify({ ...report, deviceMode: "2× NVIDIA A100, CUDA, DataParallel" })));
    assert.match(gpu, /data-testid="verdict-device">Devices: 2× NVIDIA A100, CUDA, DataParallel<\/span>/);
  });

  it("shows each claim with its quote and a verdict badge that reads without colour", () => {
    const cards = tags(html, "verdict-claim");
    assert.deepEqual(
      cards.map((c) => [/data-claim-id="([^"]*)"/.exec(c)?.[1], /data-verdict="([^"]*)"/.exec(c)?.[1]]),
      [
        ["speedup", "does-not-hold"],
        ["split", "holds"],
        ["overhead", "partly"],
        ["memory", "none"],
      ],
    );
    const badgeText = (id: string) => /data-testid="verdict-badge">(?:<span[^>]*>[^<]*<\/span>)?\s*([^<]+)</.exec(claim(html, id))?.[1]?.trim();
    assert.equal(badgeText("speedup"), "does not hold");
    assert.equal(badgeText("split"), "holds");
    assert.equal(badgeText("overhead"), "holds only partly");
    assert.equal(badgeText("memory"), "no verdict");
    assert.match(claim(html, "speedup"), /<blockquote class="markdown-text verdict-quote">DataParallel makes training faster on multiple GPUs\.<\/blockquote>/);
    assert.match(claim(html, "speedup"), /One epoch took 1\.92 s on 2 emulated devices/);
    assert.match(claim(html, "speedup"), /measured by: Epoch time/);
  });

  it("shows the numbers as label → value, formatted", () => {
    const rows = [...claim(html, "speedup").matchAll(/data-testid="verdict-number"[^>]*><th scope="row">([^<]*)<\/th><td>([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(rows, [
      ["single_s", "1.1"],
      ["dp_s", "1.923"],
      ["speedup", "5.71e-4"],
      ["steps", "125,000"],
      ["converged", "true"],
      ["note", "threads share cores"],
      ["gpu_ms", "—"],
    ]);
    assert.equal(tags(claim(html, "overhead"), "verdict-numbers").length, 0, "no numbers, no table");
  });

  it("collapses a long list of numbers behind 'show all N'", () => {
    const split = claim(html, "split");
    assert.equal(tags(split, "verdict-number").length, 8);
    assert.match(split, /<button[^>]*aria-expanded="false"[^>]*>show all 12<\/button>/);
    assert.doesNotMatch(claim(html, "speedup"), /show all/);
  });

  it("puts the committed prediction beside the claims it is about, and says so where there is none", () => {
    for (const id of ["speedup", "overhead"]) {
      const [aside] = tags(claim(html, id), "verdict-prediction");
      assert.match(aside ?? "", /data-committed="true"/, id);
      assert.match(claim(html, id), /You predicted: <strong>about 2× faster<\/strong>/, id);
    }
    for (const id of ["split", "memory"]) {
      assert.match(claim(html, id), /data-committed="false"[^>]*>no prediction committed</, id);
      assert.doesNotMatch(claim(html, id), /You predicted/, id);
    }
  });

  it("labels an answer given after the run as such, not as a prediction", () => {
    const late = predictionsByClaim([templated("dp_basics/a", question)], { [question.id]: { ...committed, afterRun: true } });
    const lateHtml = render(bundle(JSON.stringify(report)), late);
    assert.match(claim(lateHtml, "speedup"), /data-after-run="true"[^>]*><p>You answered: <strong>about 2× faster<\/strong><small[^>]*> \(given after the experiment had run\)/);
    assert.doesNotMatch(claim(lateHtml, "speedup"), /You predicted/);
  });

  it("judges a prediction right or wrong from the verdicts of the claims that decide it", () => {
    const judged: PredictQuestion = {
      ...question,
      claims: ["speedup"],
      outcomes: [{ speedup: ["holds"] }, { speedup: ["does-not-hold"] }, {}],
    };
    const judge = (choice: string) =>
      claim(render(bundle(JSON.stringify(report)), predictionsByClaim([templated("dp_basics/a", judged)], { [question.id]: { ...committed, choice } })), "speedup");
    const wrong = judge("about 2× faster");
    assert.match(wrong, /data-outcome="wrong"/);
    assert.match(wrong, /Measured: <strong>about the same<\/strong>/);
    assert.match(judge("about the same"), /data-outcome="right"[\s\S]*✓<\/span> right/);
    // Beside its own claim only.
    const overhead = claim(render(bundle(JSON.stringify(report)), predictionsByClaim([templated("dp_basics/a", judged)], { [question.id]: committed })), "overhead");
    assert.match(overhead, /no prediction committed/);
  });

  it("says what an inconclusive claim and one that needs a run are, and shows spreads and the run the numbers came from", () => {
    const run = { templateId: "dp_basics/scaling", cellId: "c1", executionId: "e-42", count: 3, recordedAt: "2025-06-01T12:00:00.000Z", params: { devices: 3 } };
    const next: VerdictReport = {
      ...report,
      experiments: [...report.experiments, { id: "hang", title: "A rank hangs", variants: [], seconds: 1, error: null, expectedStacks: "rank 1: File x.py, in all_reduce" }],
      claims: [
        {
          ...report.claims[0],
          verdict: "inconclusive",
          status: "measured",
          run,
          spreads: [{ label: "DataParallel x2", n: 5, min: 1.5, median: 2, max: 2.6, mean: 2.01 }],
        },
        { ...report.claims[1], verdict: null, status: "needs-run", explanation: "Run the cell 'Batch split' (it has not run with devices=3)." },
      ],
    };
    const html = render(bundle(JSON.stringify(next)));
    const speed = claim(html, "speedup");
    assert.match(speed, /verdict-badge-inconclusive/);
    assert.match(speed, /data-execution-id="e-42"/);
    assert.match(speed, /its run \[3\] at <time dateTime="2025-06-01T12:00:00.000Z">/);
    assert.match(speed, /with devices=3/);
    assert.match(speed, /data-label="DataParallel x2"><th scope="row">DataParallel x2<\/th><td>5<\/td><td>1.5<\/td><td>2<\/td><td>2.6<\/td>/);
    const split = claim(html, "split");
    assert.match(split, /data-status="needs-run"/);
    assert.match(split, /needs a run/);
    assert.match(split, /Run the cell &#x27;Batch split&#x27;/);
    assert.match(html, /<details class="verdict-stacks" data-testid="verdict-expected-stacks" data-experiment-id="hang"><summary>stacks \(expected: this experiment makes a rank hang\)/);
  });

  it("lists failed experiments with their error", () => {
    const failures = tags(html, "verdict-failure");
    assert.equal(failures.length, 1);
    assert.match(failures[0] ?? "", /data-experiment-id="broken"/);
    assert.match(html, /Memory per device<\/strong> failed: <code>RuntimeError: out of memory<\/code>/);
  });
});

describe("MimeOutput with a malformed verdict report", () => {
  const malformed: Array<[string, string]> = [
    ["not JSON", "{claims: ["],
    ["JSON of the wrong shape", JSON.stringify({ ...report, claims: [{ id: "x", verdict: "maybe" }] })],
    ["a missing field", JSON.stringify({ ...report, deviceMode: undefined })],
    ["null", "null"],
    ["an unknown verdict", JSON.stringify({ ...report, claims: [{ ...report.claims[0], verdict: "true" }] })],
  ];
  for (const [what, json] of malformed) {
    it(`falls back to the text form for ${what}`, () => {
      const html = render(bundle(json, "<b>verdicts</b> as text"));
      assert.equal(tags(html, "verdict-report").length, 0);
      assert.match(html, /data-testid="output-text"/);
      assert.match(html, /&lt;b&gt;verdicts&lt;\/b&gt; as text/, "still escaped text");
    });
  }

  it("says so when there is no other form to show", () => {
    const html = render({ [VERDICTS_MIME]: "{" });
    assert.match(html, /a verdict report that could not be read/);
    assert.doesNotMatch(html, /\{/);
  });

  it("leaves bundles without a verdict report as they were", () => {
    assert.match(render({ "text/plain": "42" }), /data-testid="output-text"[^>]*>42</);
  });
});
