/** Stored run, execution and output rows read back as the lab's types: what is known is read, what is not is refused, never guessed. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidDataError } from "../../server/persistence/errors";
import { foldOutputs, liveTailOutputs, parseDevicePlans, toExecution, toRun, toSequencedOutput } from "../../server/persistence/run-rows";

const at = new Date("2026-11-27T10:00:00Z");
const run = { id: "r1", notebookId: "n1", userId: null, host: "local", deviceMode: "2× cpu", exitReason: null, startedAt: at, endedAt: null };
const execution = { id: "e1", runId: "r1", cellId: "c1", source: "1+1", executionCount: 1, queuedAt: at, startedAt: at, endedAt: null, durationMs: null };

describe("run rows", () => {
  it("reads a run or an execution whose status the lab knows, and refuses one it does not", () => {
    assert.equal(toRun({ ...run, status: "interrupted" }).status, "interrupted");
    assert.throws(() => toRun({ ...run, status: "paused" }), (error: unknown) => error instanceof InvalidDataError && /run r1: stored status "paused" is unknown/.test(error.message));
    assert.equal(toExecution({ ...execution, status: "no-kernel" }).status, "no-kernel");
    assert.throws(() => toExecution({ ...execution, status: "done" }), InvalidDataError);
  });

  it("reads an output record's payload as a CellOutput, and names the record it cannot read", () => {
    const row = { seq: 7, runId: "r1", executionId: "e1", cellId: "c1", payload: { kind: "stream", name: "stdout", text: "hi\n" } };
    assert.deepEqual(toSequencedOutput(row), { seq: 7, runId: "r1", executionId: "e1", cellId: "c1", output: { kind: "stream", name: "stdout", text: "hi\n" } });
    assert.throws(() => toSequencedOutput({ ...row, payload: { kind: "stream", text: 3 } }), /output 7 of run r1: stored payload is not a CellOutput/);
  });

  it("folds adjacent chunks of one stream as a viewer shows them, and keeps streams and rich outputs apart", () => {
    const folded = foldOutputs([
      { kind: "stream", name: "stdout", text: "a" },
      { kind: "stream", name: "stdout", text: "b" },
      { kind: "stream", name: "stderr", text: "!" },
      { kind: "result", executionCount: 1, data: { "text/plain": "2" } },
      { kind: "stream", name: "stdout", text: "c" },
    ]);
    assert.deepEqual(folded, [
      { kind: "stream", name: "stdout", text: "ab" },
      { kind: "stream", name: "stderr", text: "!" },
      { kind: "result", executionCount: 1, data: { "text/plain": "2" } },
      { kind: "stream", name: "stdout", text: "c" },
    ]);
  });

  it("turns a stored live tail into what its viewer saw (elided count first), and a malformed one into nothing", () => {
    const tail = { elidedBytes: 1200, segments: [{ name: "stdout", text: "line 9\n" }] };
    assert.deepEqual(liveTailOutputs(tail), [
      { kind: "elided", elidedBytes: 1200 },
      { kind: "stream", name: "stdout", text: "line 9\n" },
    ]);
    assert.deepEqual(liveTailOutputs(null), []);
    assert.deepEqual(liveTailOutputs({ segments: "x" }), []);
  });

  it("reads device plans by tag, and anything malformed as no plans", () => {
    const plan = { kind: "cpu-emulated", engine: "DataParallel", count: 2, placement: "cpu", gpus: 0, gpusUsed: 0, backend: null, hostCores: 2, devices: ["cpu:0", "cpu:1"], names: ["cpu", "cpu"], streams: false, memorySource: "process RSS", label: "2× cpu, emulated DataParallel", reason: "no CUDA" };
    assert.deepEqual(parseDevicePlans({ dp: plan }), { dp: plan });
    assert.deepEqual(parseDevicePlans(null), {});
    assert.deepEqual(parseDevicePlans({ dp: { nope: true } }), {});
    assert.deepEqual(parseDevicePlans("garbage"), {});
  });
});
