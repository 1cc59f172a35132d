/**
 * The command dispatch: each command checked against the document, then
 * events and storage in order; a refused command changes nothing. Running
 * cells stores each execution as queued before the kernel is asked to run it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { CommandError, SourceConflictError } from "../../server/errors";
import { ExecutionRecording } from "../../server/notebook/execution-recording";
import type { KernelHosts } from "../../server/notebook/kernel-hosts";
import { applyCommand, type CommandParts } from "../../server/notebook/notebook-commands";
import { TemplateWork } from "../../server/notebook/template-work";
import { cell, kernelView, partsHarness, testLauncher, type PartsHarness } from "../helpers/runtime-parts";

const local = testLauncher("local");
const hosts: KernelHosts = { defaultHost: "local", launcher: (hostId) => (hostId === "local" ? local : undefined), ids: () => ["local"], gpuCount: () => 0 };

function parts(harness: PartsHarness, order: string[]): CommandParts {
  const recording = new ExecutionRecording(harness.ctx, kernelView());
  return {
    ctx: harness.ctx,
    hosts,
    recording,
    templates: new TemplateWork(harness.ctx, undefined),
    kernel: {
      ...kernelView(),
      execute: (code, _sink, ref) => {
        order.push(`execute ${ref?.cellId}: ${code}`);
        return ref?.executionId ?? "";
      },
      interrupt: () => order.push("interrupt"),
      restart: async () => {
        order.push("restart");
      },
      shutdown: async () => {
        order.push("shutdown");
      },
    },
  };
}

describe("applyCommand", () => {
  it("stores each code cell as queued on the kernel before the kernel runs it, in order", async () => {
    const order: string[] = [];
    const harness = partsHarness([cell("a", "a()"), cell("m", "# notes", { kind: "markdown" }), cell("b", "b()")], {
      executionQueued: (execution, where) => order.push(`queued ${execution.cellId} ${"kernel" in where ? where.kernel.host : "stored"}`),
    });
    await applyCommand(parts(harness, order), { op: "execute", notebookId: "nb", cellIds: ["a", "m", "b"] }, "u");
    assert.deepEqual(order, ["queued a local", "execute a: a()", "queued b local", "execute b: b()"]);
    harness.ctx.events.flush();
    assert.deepEqual(harness.ctx.doc.cells.map((each) => each.runState), ["queued", "idle", "queued"]);
  });

  it("refuses to run a cell changed since the user saw it, or one already queued, before anything runs", async () => {
    const order: string[] = [];
    const harness = partsHarness([cell("a", "a()"), cell("b", "b()")]);
    const stale = applyCommand(parts(harness, order), { op: "execute", notebookId: "nb", cellIds: ["a", "b"], sourceHashes: { b: sourceHash("old b") } }, "u");
    await assert.rejects(stale, SourceConflictError);
    assert.deepEqual(order, []);
    await applyCommand(parts(harness, order), { op: "execute", notebookId: "nb", cellIds: ["a"] }, "u");
    harness.ctx.events.flush();
    await assert.rejects(applyCommand(parts(harness, order), { op: "execute", notebookId: "nb", cellIds: ["a"] }, "u"), (error: unknown) => error instanceof CommandError && error.code === "busy");
    assert.deepEqual(order, ["execute a: a()"]);
  });

  it("edits cells as events and stores each edit, and refuses a stale edit", async () => {
    const harness = partsHarness([cell("a", "x = 1")]);
    const run = parts(harness, []);
    await applyCommand(run, { op: "insert-cell", notebookId: "nb", index: 1, cell: { id: "b", kind: "code", source: "y" } }, "u");
    await applyCommand(run, { op: "move-cell", notebookId: "nb", cellId: "b", toIndex: 0 }, "u");
    await applyCommand(run, { op: "set-source", notebookId: "nb", cellId: "a", source: "x = 2", baseHash: sourceHash("x = 1") }, "u");
    await assert.rejects(applyCommand(run, { op: "set-source", notebookId: "nb", cellId: "a", source: "x = 3", baseHash: sourceHash("x = 1") }, "u"), SourceConflictError);
    await applyCommand(run, { op: "delete-cell", notebookId: "nb", cellId: "b" }, "u");
    harness.ctx.events.flush();
    assert.deepEqual(harness.ctx.doc.cells.map((each) => `${each.id}:${each.source}`), ["a:x = 2"]);
    assert.deepEqual(harness.stored.map((call) => call.call), ["insertCell", "moveCell", "setSource", "deleteCell"]);
  });

  it("checks a kernel spec against the lab's hosts, leaves an unchanged one alone, and hands kernel commands to the kernel", async () => {
    const order: string[] = [];
    const harness = partsHarness([]);
    const run = parts(harness, order);
    await applyCommand(run, { op: "set-kernel-spec", notebookId: "nb", hostId: "local", gpus: 0 }, "u");
    await assert.rejects(applyCommand(run, { op: "set-kernel-spec", notebookId: "nb", hostId: "nowhere", gpus: 0 }, "u"), (error: unknown) => error instanceof CommandError && error.code === "not-found");
    await applyCommand(run, { op: "interrupt", notebookId: "nb" }, "u");
    await applyCommand(run, { op: "restart", notebookId: "nb" }, "u");
    assert.deepEqual(harness.stored, []);
    assert.deepEqual(order, ["interrupt", "restart"]);
  });
});
