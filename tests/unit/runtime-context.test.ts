/** The helpers every runtime part shares: run states that keep what they do not change, and where a run is stored. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runKernel, setRunState } from "../../server/notebook/runtime-context";
import { cell, kernelView, partsHarness, TEST_INFO } from "../helpers/runtime-parts";

describe("runtime context", () => {
  it("changes a cell's run state and keeps its count and execution unless told", () => {
    const harness = partsHarness([{ ...cell("a"), executionCount: 2, executionId: "e0" }]);
    setRunState(harness.ctx, "a", "queued");
    assert.deepEqual(harness.published.at(-1), { type: "cell-run-state", cellId: "a", runState: "queued", executionCount: 2, executionId: "e0" });
    setRunState(harness.ctx, "a", "idle", { executionCount: null, executionId: "e1" });
    assert.deepEqual(harness.published.at(-1), { type: "cell-run-state", cellId: "a", runState: "idle", executionCount: null, executionId: "e1" });
  });

  it("describes a starting kernel by the spec's host, and a live one by its info", () => {
    const harness = partsHarness([]);
    assert.deepEqual(runKernel(kernelView({ state: "starting" }), harness.ctx.doc), { info: null, host: "local", agent: null });
    assert.deepEqual(runKernel(kernelView(), harness.ctx.doc), { info: TEST_INFO, host: "local", agent: null });
  });
});
