/** Completion and inspection: offsets converted both ways, and never answered while the kernel is not idle. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { completeIn, inspectIn, type AssistKernel } from "../../server/notebook/assist-answers";
import type { KernelStatus } from "../../server/core/protocol/notebook-model";
import { TEST_INFO } from "../helpers/runtime-parts";

function kernel(status: KernelStatus, asked: Array<{ code: string; cursor: number }> = [], answer = true): AssistKernel {
  return {
    status,
    complete: async (code, cursor) => {
      asked.push({ code, cursor });
      return answer ? { type: "complete_reply", id: "1", matches: [{ text: "torch", type: "module" }], cursorStart: 1, cursorEnd: 3 } : null;
    },
    inspect: async (code, cursor) => {
      asked.push({ code, cursor });
      return answer ? { type: "inspect_reply", id: "1", found: true, text: "doc" } : null;
    },
  };
}

describe("assist answers", () => {
  it("asks in code points and answers in UTF-16 units", async () => {
    const asked: Array<{ code: string; cursor: number }> = [];
    const code = "😀to";
    const answer = await completeIn(kernel({ state: "idle", info: TEST_INFO }, asked), code, 4);
    assert.deepEqual(asked, [{ code, cursor: 3 }]);
    assert.deepEqual(answer, { status: "ok", matches: [{ text: "torch", type: "module" }], from: 2, to: 4 });
    assert.deepEqual(await inspectIn(kernel({ state: "idle", info: TEST_INFO }), code, 3, false), { status: "ok", found: true, text: "doc" });
  });

  it("does not ask a busy, starting or absent kernel", async () => {
    const asked: Array<{ code: string; cursor: number }> = [];
    assert.deepEqual(await completeIn(kernel({ state: "busy", info: TEST_INFO }, asked), "x", 1), { status: "unavailable", reason: "the kernel is running a cell" });
    assert.deepEqual(await inspectIn(kernel({ state: "not-started" }, asked), "x", 1, true), { status: "unavailable", reason: "the kernel is not-started" });
    assert.deepEqual(asked, []);
  });

  it("says so when the kernel does not answer", async () => {
    const silent = kernel({ state: "idle", info: TEST_INFO }, [], false);
    assert.deepEqual(await completeIn(silent, "x", 1), { status: "unavailable", reason: "the kernel did not answer in time" });
    assert.deepEqual(await inspectIn(silent, "x", 1, false), { status: "unavailable", reason: "the kernel did not answer in time" });
  });
});
