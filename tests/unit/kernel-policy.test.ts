/** When a kernel counts as unused, when idle shutdown ends it, and when one more may start: every case. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sweepIntervalMs } from "../../server/notebook/kernel-culler";
import {
  admitKernel,
  cullDecision,
  idleShutdownReason,
  isLive,
  kernelUse,
  startsKernel,
  type CullDecision,
  type KernelFacts,
  type KernelState,
  type KernelUse,
} from "../../server/notebook/kernel-policy";
import { parseStat } from "../../server/kernel/process-memory";
import { describePeriod } from "../../server/core/protocol/kernels-model";

const MIN = 60_000;
const base: KernelFacts = { state: "idle", executions: 0, viewers: 0, lastActivityAt: 1_000, lastViewerLeftAt: null, gpuBusyAt: null };

describe("kernelUse", () => {
  const cases: Array<[string, Partial<KernelFacts>, KernelUse]> = [
    ["never started", { state: "not-started", viewers: 0 }, { kind: "no-process" }],
    ["dead, even with viewers", { state: "dead", viewers: 3 }, { kind: "no-process" }],
    ["shut down", { state: "shutdown" }, { kind: "no-process" }],
    ["idle, nobody viewing, nobody ever left", {}, { kind: "unused", since: 1_000 }],
    ["idle, the last viewer left after its last activity", { lastViewerLeftAt: 5_000 }, { kind: "unused", since: 5_000 }],
    ["idle, activity after the last viewer left", { lastActivityAt: 9_000, lastViewerLeftAt: 5_000 }, { kind: "unused", since: 9_000 }],
    ["idle with a viewer", { viewers: 1 }, { kind: "viewed", viewers: 1 }],
    ["idle with two tabs", { viewers: 2 }, { kind: "viewed", viewers: 2 }],
    ["busy, nobody viewing", { state: "busy", executions: 1 }, { kind: "executing", executions: 1 }],
    ["busy before the queue count caught up", { state: "busy", executions: 0 }, { kind: "executing", executions: 1 }],
    ["idle with cells queued (about to run)", { executions: 3 }, { kind: "executing", executions: 3 }],
    ["starting with a cell waiting", { state: "starting", executions: 1 }, { kind: "executing", executions: 1 }],
    ["starting with nothing queued (Start kernel)", { state: "starting" }, { kind: "changing", state: "starting" }],
    ["restarting", { state: "restarting" }, { kind: "changing", state: "restarting" }],
    ["interrupting a running cell", { state: "interrupting", executions: 1 }, { kind: "executing", executions: 1 }],
    ["idle, nobody viewing, its GPUs busy after the last activity (a background training thread)", { lastActivityAt: 1_000, gpuBusyAt: 8_000 }, { kind: "unused", since: 8_000 }],
    ["idle, GPUs last busy before the last viewer left", { gpuBusyAt: 2_000, lastViewerLeftAt: 5_000 }, { kind: "unused", since: 5_000 }],
  ];
  for (const [name, facts, expected] of cases) {
    it(name, () => assert.deepEqual(kernelUse({ ...base, ...facts }), expected));
  }
});

describe("cullDecision", () => {
  const hour = 60 * MIN;
  const cases: Array<[string, KernelUse, number, number | null, CullDecision]> = [
    ["unused for less than the period", { kind: "unused", since: 0 }, hour - 1, hour, { action: "keep", shutdownAt: hour }],
    ["unused for exactly the period", { kind: "unused", since: 0 }, hour, hour, { action: "shut-down", idleMs: hour }],
    ["unused for longer", { kind: "unused", since: 0 }, 3 * hour, hour, { action: "shut-down", idleMs: 3 * hour }],
    ["unused, idle shutdown off", { kind: "unused", since: 0 }, 100 * hour, null, { action: "keep", shutdownAt: null }],
    ["a running cell for ten hours, nobody viewing", { kind: "executing", executions: 1 }, 10 * hour, hour, { action: "keep", shutdownAt: null }],
    ["viewed for ten hours with nothing run", { kind: "viewed", viewers: 1 }, 10 * hour, hour, { action: "keep", shutdownAt: null }],
    ["restarting", { kind: "changing", state: "restarting" }, 10 * hour, hour, { action: "keep", shutdownAt: null }],
    ["no process", { kind: "no-process" }, 10 * hour, hour, { action: "keep", shutdownAt: null }],
  ];
  for (const [name, use, now, limit, expected] of cases) {
    it(name, () => assert.deepEqual(cullDecision(use, now, limit), expected));
  }
  const warn = 5 * MIN;
  const warned: Array<[string, number, CullDecision]> = [
    ["before the warning window", hour - warn - 1, { action: "keep", shutdownAt: hour }],
    ["at the start of the warning window", hour - warn, { action: "warn", shutdownAt: hour }],
    ["inside the warning window", hour - 1, { action: "warn", shutdownAt: hour }],
    ["at the end of the period", hour, { action: "shut-down", idleMs: hour }],
  ];
  for (const [name, now, expected] of warned) {
    it(`with a ${warn / MIN} min warning: ${name}`, () => assert.deepEqual(cullDecision({ kind: "unused", since: 0 }, now, hour, warn), expected));
  }

  it("a viewer leaving restarts the idle clock", () => {
    const facts = { ...base, lastActivityAt: 0, lastViewerLeftAt: 50 * MIN };
    assert.deepEqual(cullDecision(kernelUse(facts), 61 * MIN, hour), { action: "keep", shutdownAt: 110 * MIN });
    assert.equal(cullDecision(kernelUse(facts), 110 * MIN, hour).action, "shut-down");
  });
});

describe("admitKernel", () => {
  const cases: Array<[number, number, number, string | null]> = [
    [0, 0, 16, null],
    [15, 15, 16, null],
    [16, 3, 16, "this lab runs at most 16 kernels; shut one down in Running kernels (3 idle)"],
    [16, 0, 16, "this lab runs at most 16 kernels; shut one down in Running kernels (0 idle)"],
    [2, 2, 2, "this lab runs at most 2 kernels; shut one down in Running kernels (2 idle)"],
    [1, 0, 1, "this lab runs at most 1 kernel; shut one down in Running kernels (0 idle)"],
    [20, 1, 16, "this lab runs at most 16 kernels; shut one down in Running kernels (1 idle)"],
  ];
  for (const [live, idle, max, refusal] of cases) {
    it(`${live} live of at most ${max}: ${refusal === null ? "admitted" : "refused"}`, () => {
      assert.deepEqual(admitKernel(live, idle, max), refusal === null ? { ok: true } : { ok: false, reason: refusal });
    });
  }
});

describe("startsKernel and isLive", () => {
  const cases: Array<[KernelState, boolean, boolean, boolean]> = [
    // state, live, execute starts one, restart starts one
    ["not-started", false, true, true],
    ["shutdown", false, true, true],
    ["dead", false, false, true],
    ["starting", true, false, false],
    ["idle", true, false, false],
    ["busy", true, false, false],
    ["interrupting", true, false, false],
    ["restarting", true, false, false],
  ];
  for (const [state, live, execute, restart] of cases) {
    it(state, () => {
      assert.equal(isLive(state), live);
      assert.equal(startsKernel("execute", state), execute);
      assert.equal(startsKernel("restart", state), restart);
    });
  }
});

describe("what the viewer is told", () => {
  const cases: Array<[number, string]> = [
    [60 * MIN, "60 min"],
    [90 * 1000, "1.5 min"],
    [MIN, "1 min"],
    [2_000, "2 s"],
    [1_500, "1.5 s"],
  ];
  for (const [ms, text] of cases) it(`${ms} ms is "${text}"`, () => assert.equal(describePeriod(ms), text));

  it("says why the kernel is gone and what to do", () => {
    assert.equal(idleShutdownReason(60 * MIN), "shut down after 60 min idle; run a cell to start a new kernel");
  });
});

describe("sweepIntervalMs", () => {
  const cases: Array<[number, number]> = [
    [60 * MIN, 30_000],
    [5 * MIN, 30_000],
    [MIN, 6_000],
    [1_000, 100],
    [100, 50],
  ];
  for (const [period, interval] of cases) it(`a ${period} ms period is checked every ${interval} ms`, () => assert.equal(sweepIntervalMs(period), interval));
});

describe("parseStat", () => {
  const cases: Array<[string, string, { pid: number; ppid: number; session: number } | null]> = [
    ["a plain name", "4242 (python3) S 4200 4242 4242 34816 4242 4194560 1 0", { pid: 4242, ppid: 4200, session: 4242 }],
    ["spaces and parentheses in the name", "77 (my (odd) name) R 1 77 60 0 -1", { pid: 77, ppid: 1, session: 60 }],
    ["truncated", "77 (x", null],
    ["no fields after the name", "77 (x)", null],
  ];
  for (const [name, line, expected] of cases) it(name, () => assert.deepEqual(parseStat(line), expected));
});
