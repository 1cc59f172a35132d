/**
 * A workshop's plan as people are shown it (server/workshops/workshop-plans.ts):
 * a plan the hosts cannot hold is refused with the numbers, the settings say
 * the resources in words, the sizing counts the seats other workshops hold,
 * and a participant's view says where they stand.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CommandError } from "../../server/errors";
import type { ParameterValue } from "../../server/core/protocol/notebook-model";
import type { WorkshopListing, WorkshopRow } from "../../server/persistence/workshop-repository";
import { participantView, WorkshopPlans } from "../../server/workshops/workshop-plans";

const ROW: WorkshopRow = {
  id: "w1",
  title: "Friday class",
  joinCode: "ABCDEFGH",
  scenarioIds: ["dp"],
  closedAt: null,
  startsAt: null,
  endsAt: null,
  endedAt: null,
  pace: "led",
  revealedSteps: 1,
  capacity: 4,
  hostId: "gpu-1",
  gpusPerParticipant: 2,
  facilitatorId: "f",
};

function plans(heldElsewhere: number, ranks: Record<string, ParameterValue> = {}): WorkshopPlans {
  const listing: WorkshopListing = { ...ROW, createdAt: new Date(0), participants: [{ id: "p", name: "Ada", waitingSince: new Date(0), notebooks: [] }] };
  return new WorkshopPlans(
    { seatedElsewhere: () => Promise.resolve(heldElsewhere), listing: () => Promise.resolve(listing) },
    {
      hosts: { defaultHost: "local", ids: () => ["local", "gpu-1"], gpuCount: (hostId) => (hostId === "gpu-1" ? 8 : null) },
      kernels: { limits: { maxKernels: 5, idleShutdownMs: null } },
    },
    {
      notebookCells: (scenarioId) =>
        scenarioId === "dp" ? Promise.resolve([{ kind: "code", source: "", template: { id: "dp/run", detached: false, parameters: ranks, fields: [], question: null } }]) : Promise.reject(new Error("no scenario")),
    },
  );
}

function refused(work: () => unknown, pattern: RegExp): void {
  assert.throws(work, (error: unknown) => error instanceof CommandError && error.code === "invalid" && pattern.test(error.message));
}

describe("WorkshopPlans", () => {
  it("refuses an unknown host and more GPUs than the host has, with the numbers", () => {
    const plan = plans(0);
    refused(() => plan.checkPlan("gpu-9", 0, 4), /no host "gpu-9" \(the lab's hosts: local, gpu-1\)/);
    refused(() => plan.checkPlan("gpu-1", 2, 5), /host gpu-1 has 8 GPU\(s\): 2 each fits 4 participant\(s\), not 5/);
    assert.equal(plan.checkPlan("gpu-1", 2, 4), "gpu-1");
    assert.equal(plan.checkPlan(null, 1, 100), null, "a host whose GPUs are unknown is not refused");
  });

  it("says the resources in words and reads an unknown pace as self-paced", () => {
    const settings = plans(0).settings(ROW);
    assert.equal(settings.resources, "2 GPUs each on host gpu-1, for up to 4 participants");
    assert.equal(settings.pace, "led");
    assert.equal(plans(0).settings({ ...ROW, pace: "sprint", gpusPerParticipant: 0, hostId: null }).pace, "self");
    assert.equal(plans(0).settings({ ...ROW, gpusPerParticipant: 0, hostId: null }).resources, "CPU emulation on host local (no GPU per participant), for up to 4 participants");
  });

  it("sizes the plan against the kernels other workshops' seats hold", async () => {
    const plan = plans(3);
    assert.equal(plan.settings(ROW).sizing.verdict, "fits", "nothing counted yet: 4 of 5 kernels");
    await plan.countHeldElsewhere(ROW.id);
    const sizing = plan.settings(ROW).sizing;
    assert.equal(sizing.verdict, "does-not-fit");
    assert.ok(sizing.advice.some((line) => /other workshops/.test(line)));
  });

  it("lists a workshop with its participants waiting or not (an unknown scenario has no ranks to learn)", async () => {
    const plan = plans(0, { devices: 4 });
    await plan.learnRanks(["dp", "dp", "unknown"]);
    const view = await plan.view(ROW.id);
    assert.deepEqual(view.participants, [{ id: "p", name: "Ada", notebooks: [], waiting: true }]);
    assert.equal(view.pace, "led");
  });

  it("tells a participant whether they are admitted, waiting (and why) or the workshop ended", () => {
    const settings = plans(0).settings(ROW);
    assert.equal(participantView(settings, null, []).state, "admitted");
    const waiting = participantView(settings, 2, []);
    assert.equal(waiting.state, "waiting");
    assert.match(waiting.waitingBecause ?? "", /room for 4 at a time/);
    assert.equal(participantView({ ...settings, endedAt: new Date(0).toISOString() }, 2, []).state, "ended");
  });
});
