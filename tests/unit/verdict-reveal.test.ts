/**
 * Predict first, then reveal: an explanation waits until every claim it
 * names has a verdict on the page; a claim that needs a run, or whose report
 * cannot be read, reveals nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { claimsWithVerdict, isRevealed } from "../../components/notebook/model/verdict-reveal";
import { VERDICTS_MIME } from "../../server/core/protocol/metrics-model";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import type { VerdictReport } from "../../server/core/protocol/verdict-model";

const report: VerdictReport = {
  scenario: "dp-basics",
  title: "DataParallel basics",
  source: "001.md",
  deviceMode: "2× cpu",
  params: {},
  experiments: [{ id: "split", title: "Split", variants: [], seconds: 1, error: null }],
  claims: [
    { id: "splits-evenly", quote: "evenly", experiment: "split", verdict: "does-not-hold", status: "measured", explanation: "uneven", numbers: [] },
    { id: "scaling", quote: "linear", experiment: "split", verdict: "inconclusive", status: "measured", explanation: "noise", numbers: [] },
    { id: "replicas", quote: "copied", experiment: "split", verdict: null, status: "needs-run", explanation: "Run the cell", numbers: [] },
  ],
};

const display = (text: string): CellOutput => ({ kind: "display", data: { [VERDICTS_MIME]: text, "text/plain": "verdicts" } });

describe("claimsWithVerdict / isRevealed", () => {
  it("counts the claims a readable report gives a verdict, inconclusive included", () => {
    const shown = claimsWithVerdict([{ outputs: [] }, { outputs: [{ kind: "stream", name: "stdout", text: "x" }, display(JSON.stringify(report))] }]);
    assert.deepEqual([...shown].sort(), ["scaling", "splits-evenly"]);
    assert.equal(isRevealed(["splits-evenly"], shown), true);
    assert.equal(isRevealed(["splits-evenly", "replicas"], shown), false, "a claim that needs a run reveals nothing");
    assert.equal(isRevealed(undefined, shown), true, "text that waits for nothing is shown");
  });

  it("reveals nothing from a report it cannot read", () => {
    assert.equal(claimsWithVerdict([{ outputs: [display("{not json"), display(JSON.stringify({ claims: [{ id: "x", verdict: "holds" }] }))] }]).size, 0);
    assert.equal(isRevealed(["splits-evenly"], new Set()), false);
  });
});
