/** The headless scenario runner: `bash scripts/scenario.sh <id> --json` runs real experiments, prints one JSON document. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";

const ROOT = path.resolve(__dirname, "..", "..");
// "inconclusive": a timing claim whose spread is as large as its effect (issue 13) is not stated as a result.
const VERDICTS = new Set(["holds", "does-not-hold", "partly", "inconclusive"]);
const LIMIT = { timeout: 180_000 };

interface ClaimResult {
  id: string;
  quote: string;
  verdict: string;
  explanation: string;
  evidence: Record<string, unknown>;
}

interface ScenarioRun {
  scenario: string;
  deviceMode: string;
  experiments: { id: string; error: string | null; evidence: Record<string, unknown> }[];
  claims: ClaimResult[];
}

function runScenario(...args: string[]) {
  return spawnSync("bash", ["scripts/scenario.sh", ...args], { cwd: ROOT, encoding: "utf8", timeout: 170_000 });
}

describe("scenario runner", () => {
  it("runs dp-basics and prints one JSON document with a measured verdict per claim", LIMIT, () => {
    const done = runScenario("dp-basics", "--json", "--param", "devices=2", "--param", "timing_repeats=2");
    assert.equal(done.status, 0, done.stderr);
    const run = JSON.parse(done.stdout) as ScenarioRun;
    assert.equal(run.scenario, "dp-basics");
    assert.match(run.deviceMode, /cpu|CUDA/);
    assert.ok(run.experiments.length >= 4);
    for (const experiment of run.experiments) {
      assert.equal(experiment.error, null, `${experiment.id}: ${experiment.error}`);
    }
    assert.ok(run.claims.length >= 5);
    for (const claim of run.claims) {
      assert.ok(VERDICTS.has(claim.verdict), `${claim.id}: ${claim.verdict}`);
      assert.ok(claim.quote.length > 20, claim.id);
      assert.equal(typeof claim.evidence, "object");
      assert.match(claim.explanation, /\d/);
    }
    const split = run.claims.find((c) => c.id === "splits-evenly");
    assert.deepEqual(split?.evidence.samples_per_device, [32, 32], "64 rows on 2 devices");
  });

  it("refuses a hostile parameter with a clear message and exit code 2, running nothing", LIMIT, () => {
    const done = runScenario("dp-basics", "--json", "--param", "devices=1); import os; os.system('x')");
    assert.equal(done.status, 2);
    assert.equal(done.stdout, "");
    assert.match(done.stderr, /'devices' must be an int in \[1, 8\]/);
  });

  it("refuses an unknown scenario id", LIMIT, () => {
    const done = runScenario("nope");
    assert.equal(done.status, 2);
    assert.match(done.stderr, /unknown scenario 'nope'/);
  });
});
