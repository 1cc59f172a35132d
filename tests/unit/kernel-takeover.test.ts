/**
 * Taking over a kernel from the previous server: the running cell goes on
 * showing what it printed, the previous queue runs here in order under its
 * stored executions, and a kernel that is gone leaves every cell idle.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExecutionRecording } from "../../server/notebook/execution-recording";
import { takeOverKernel, type TakeoverParts, type TakenOverRun } from "../../server/notebook/kernel-takeover";
import { cell, kernelView, partsHarness, TEST_INFO, testLauncher, type PartsHarness } from "../helpers/runtime-parts";

const launcher = testLauncher("agent-host");

function parts(harness: PartsHarness, resumed: boolean, executed: string[]): TakeoverParts {
  return {
    ctx: harness.ctx,
    hosts: { launcher: (hostId) => (hostId === launcher.id ? launcher : undefined) },
    recording: new ExecutionRecording(harness.ctx, kernelView()),
    kernel: {
      resume: async () => resumed,
      execute: (code, _sink, ref) => {
        executed.push(`${ref?.executionId}:${code}`);
        return ref?.executionId ?? "";
      },
    },
  };
}

const RUN: TakenOverRun = {
  id: "run1",
  hostId: launcher.id,
  agentKernelId: "k1",
  agentSeq: 7,
  info: TEST_INFO,
  running: { id: "e1", cellId: "a", outputs: [{ kind: "stream", name: "stdout", text: "step 1\n" }], executionCount: 4, startedAt: null },
  queued: [
    { id: "q1", cellId: "b", source: "b()" },
    { id: "q2", cellId: "gone", source: "gone()" },
    { id: "q3", cellId: "c", source: "c()" },
  ],
};

describe("takeOverKernel", () => {
  it("gives up on a host this server does not have, storing nothing", async () => {
    const harness = partsHarness([cell("a")]);
    assert.equal(await takeOverKernel(parts(harness, true, []), { ...RUN, hostId: "elsewhere" }), false);
    assert.deepEqual(harness.stored, []);
    assert.deepEqual(harness.published, []);
  });

  it("keeps the running cell running with its output, and runs the previous queue in order", async () => {
    const harness = partsHarness([cell("a", "train()"), cell("b", "b()"), cell("c", "c()")]);
    const executed: string[] = [];
    assert.equal(await takeOverKernel(parts(harness, true, executed), RUN), true);
    harness.ctx.events.flush();
    const [a, b, c] = harness.ctx.doc.cells;
    assert.equal(a?.runState, "running");
    assert.equal(a?.executionCount, 4);
    assert.deepEqual(a?.outputs, RUN.running?.outputs);
    assert.equal(b?.runState, "queued");
    assert.equal(c?.runState, "queued");
    assert.deepEqual(executed, ["q1:b()", "q3:c()"]);
    assert.deepEqual(
      harness.stored.map((call) => call.call),
      ["runResumed", "executionResumed", "executionQueued", "executionQueued", "queuedExecutionEnded", "executionQueued"],
    );
    assert.deepEqual(harness.stored[2]?.args[1], { stored: true });
  });

  it("leaves every cell idle when the kernel is gone", async () => {
    const harness = partsHarness([cell("a", "train()"), cell("b", "b()"), cell("c", "c()")]);
    const executed: string[] = [];
    assert.equal(await takeOverKernel(parts(harness, false, executed), RUN), false);
    harness.ctx.events.flush();
    assert.deepEqual(harness.ctx.doc.cells.map((each) => each.runState), ["idle", "idle", "idle"]);
    assert.deepEqual(executed, []);
  });
});
