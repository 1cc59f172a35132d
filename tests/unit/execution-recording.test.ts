/**
 * What an execution produces, recorded: its run states and outputs as
 * events, its stored record, its metrics attributed to the execution the
 * kernel runs now, and which cells the kernel ran to the end.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sourceHash } from "../../server/core/protocol/source-hash";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { ExecutionRecording } from "../../server/notebook/execution-recording";
import type { ExecutionRecord } from "../../server/notebook/persistence-contract";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import type { DevicePlan } from "../../server/core/protocol/kernel-messages";
import { cell, kernelView, partsHarness } from "../helpers/runtime-parts";

const PLAN: DevicePlan = {
  kind: "cpu-emulated",
  engine: "single",
  count: 1,
  placement: "cpu",
  gpus: 0,
  gpusUsed: 0,
  backend: null,
  hostCores: 2,
  devices: ["cpu"],
  names: ["cpu"],
  streams: false,
  memorySource: "rss",
  label: "cpu",
  reason: null,
};

function recordLog(): { record: ExecutionRecord; log: string[] } {
  const log: string[] = [];
  const record: ExecutionRecord = {
    output: (output) => log.push(`output ${output.kind === "stream" ? output.text : output.kind}`),
    tailChanged: () => log.push("tail"),
    heard: () => log.push("heard"),
    devicePlan: (tag) => log.push(`plan ${tag}`),
    finished: (result) => log.push(`finished ${result.status}`),
  };
  return { record, log };
}

describe("ExecutionRecording", () => {
  it("stores a started execution, shows its output and ends it idle with its count", () => {
    const { record, log } = recordLog();
    const harness = partsHarness([cell("a", "print('hi')")], { executionStarted: () => record });
    const recording = new ExecutionRecording(harness.ctx, kernelView());
    harness.tails.source = recording;
    const sink = recording.sinkFor("a", "e1", sourceHash("print('hi')"));
    sink.started();
    sink.output({ type: "stream", id: "m1", name: "stdout", text: "hi\n" });
    sink.output({ type: "error", id: "m2", ename: "E", evalue: "v", traceback: [] });
    sink.finished({ status: "ok", executionCount: 3, durationMs: 5 });
    assert.deepEqual(harness.stored.map((call) => call.call), ["executionStarted"]);
    assert.deepEqual(log, ["output hi\n", "output error", "finished ok"]);
    const a = harness.ctx.doc.cells[0]!;
    assert.equal(a.runState, "idle");
    assert.equal(a.executionCount, 3);
    assert.equal(a.executionId, "e1");
    const outputs: CellOutput[] = [{ kind: "stream", name: "stdout", text: "hi\n" }, { kind: "error", ename: "E", evalue: "v", traceback: [] }];
    assert.deepEqual(a.outputs, outputs);
    assert.equal(harness.published.at(-1)?.type, "cell-finished");
    assert.equal(recording.ranAsIs(a), true);
  });

  it("forgets what a kernel ran when it fails, its source changes or the kernel leaves", () => {
    const harness = partsHarness([cell("a", "x = 1")]);
    const recording = new ExecutionRecording(harness.ctx, kernelView());
    const run = (status: "ok" | "error") => {
      const sink = recording.sinkFor("a", `e-${status}`, sourceHash("x = 1"));
      sink.started();
      sink.finished({ status, executionCount: 1, durationMs: 1 });
    };
    run("ok");
    assert.equal(recording.ranAsIs(cell("a", "x = 1")), true);
    assert.equal(recording.ranAsIs(cell("a", "x = 2")), false);
    run("error");
    assert.equal(recording.ranAsIs(cell("a", "x = 1")), false);
    run("ok");
    recording.kernelLeft();
    assert.equal(recording.ranAsIs(cell("a", "x = 1")), false);
  });

  it("ends an execution that never started as its stored queued one", () => {
    const harness = partsHarness([cell("a", "x")], { queuedExecutionEnded: () => true });
    const recording = new ExecutionRecording(harness.ctx, kernelView());
    recording.sinkFor("a", "q1", sourceHash("x")).finished({ status: "aborted", executionCount: null, durationMs: 0 });
    assert.deepEqual(harness.stored.map((call) => call.call), ["queuedExecutionEnded"]);
    assert.equal(harness.ctx.doc.cells[0]!.executionId, "q1");
  });

  it("attributes metrics to the running execution, and only stores them once its cell is deleted", () => {
    const { record, log } = recordLog();
    const harness = partsHarness([cell("a", "train()")], { executionStarted: () => record });
    const recording = new ExecutionRecording(harness.ctx, kernelView());
    harness.tails.source = recording;
    recording.sinkFor("a", "e1", sourceHash("train()")).started();
    recording.recordMetric({ type: "metric", rank: 0, step: 1, values: { loss: 2 } });
    recording.recordDevicePlan({ type: "device_plan", runId: "v1", plan: PLAN });
    harness.ctx.events.flush();
    assert.ok(harness.published.some((event) => event.type === "cell-device-plan" && event.tag === "v1" && event.executionId === "e1"));
    assert.deepEqual(recording.liveMetricsOf("a"), { points: 1, ranks: [{ rank: 0, step: 1, values: { loss: 2 } }] });
    assert.deepEqual(harness.stored.at(-1), { call: "metrics", args: [[{ rank: 0, step: 1, values: { loss: 2 }, tag: "", executionId: "e1" }]] });
    assert.ok(harness.published.some((event) => event.type === "cell-metric-points"));
    const deleted: NotebookEvent = { type: "cell-deleted", cellId: "a" };
    recording.published(deleted);
    harness.ctx.events.emit(deleted);
    const shown = harness.published.length;
    recording.recordMetric({ type: "metric", rank: 0, step: 2, values: { loss: 1 } });
    recording.recordDevicePlan({ type: "device_plan", plan: PLAN });
    harness.ctx.events.flush();
    assert.equal(harness.published.length, shown);
    assert.equal(harness.stored.at(-1)?.call, "metrics");
    assert.deepEqual(log, ["heard", "plan v1", "heard"]);
  });
});
