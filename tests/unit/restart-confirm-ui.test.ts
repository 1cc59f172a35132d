/** Restart asks first only when a live kernel's state would be lost. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { restartLosesState } from "../../components/notebook/model/notebook-controller";
import type { KernelStatus } from "../../server/core/protocol/notebook-model";

describe("restart confirmation", () => {
  const cases: Array<[KernelStatus["state"] | undefined, boolean]> = [
    ["idle", true],
    ["busy", true],
    ["interrupting", true],
    ["dead", false],
    ["not-started", false],
    ["starting", false],
    ["restarting", false],
    ["shutdown", false],
    [undefined, false],
  ];
  for (const [state, asks] of cases) {
    it(`${asks ? "asks" : "does not ask"} when the kernel is ${state ?? "unknown"}`, () => {
      assert.equal(restartLosesState(state), asks);
    });
  }
});
