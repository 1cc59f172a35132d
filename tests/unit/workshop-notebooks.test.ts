/**
 * What a workshop means for one of its notebooks where it is driven
 * (server/workshops/workshop-notebooks.ts): a led workshop refuses a
 * participant's unrevealed step, a self-paced one refuses nothing, and an
 * ended workshop's kernels shut down only for the copies open here.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CommandError } from "../../server/errors";
import { WORKSHOP_ENDED_REASON, WorkshopNotebooks } from "../../server/workshops/workshop-notebooks";

/** Two steps: an explanation and the first experiment, then the verdicts. */
const CELLS = [
  { id: "intro", kind: "markdown" as const, template: null, executionCount: null },
  { id: "experiment", kind: "code" as const, template: { id: "dp/experiment" }, executionCount: null },
  { id: "verdicts", kind: "code" as const, template: { id: "dp/verdicts" }, executionCount: null },
];

function rules(pace: { pace: string; revealedSteps: number } | null, open: readonly string[] = [], stopped: string[][] = []): WorkshopNotebooks {
  return new WorkshopNotebooks(
    { paceOf: () => Promise.resolve(pace), notebookIds: () => Promise.resolve(["copy-a", "copy-b"]) },
    {
      get: (notebookId) => Promise.resolve(open.includes(notebookId) ? { notebookId } : undefined),
      kernels: { shutdown: (notebookId, reason) => Promise.resolve(stopped.push([notebookId, reason])) },
    },
  );
}

describe("WorkshopNotebooks", () => {
  it("refuses a step a led workshop has not revealed, in plain words", async () => {
    const led = rules({ pace: "led", revealedSteps: 1 });
    await led.checkRevealed("copy-a", CELLS, ["intro", "experiment"]);
    await assert.rejects(led.checkRevealed("copy-a", CELLS, ["verdicts"]), (error: unknown) => {
      assert.ok(error instanceof CommandError);
      assert.equal(error.code, "forbidden");
      assert.match(error.message, /not revealed this step yet/);
      return true;
    });
  });

  it("refuses nothing in a self-paced workshop or outside any", async () => {
    await rules({ pace: "self", revealedSteps: 0 }).checkRevealed("copy-a", CELLS, ["verdicts"]);
    await rules(null).checkRevealed("mine", CELLS, ["verdicts"]);
  });

  it("shuts down the kernels of the copies open here, saying the workshop ended", async () => {
    const stopped: string[][] = [];
    await rules(null, ["copy-b"], stopped).endLocalKernels("workshop");
    assert.deepEqual(stopped, [["copy-b", WORKSHOP_ENDED_REASON]]);
  });
});
