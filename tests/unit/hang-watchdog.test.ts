/**
 * The hang watchdog on its own (server/kernel/hang-watchdog.ts): a quiet
 * running cell gets one report of its processes' stacks, from the kernel or,
 * when the kernel does not answer, from Ctrl-\ on its tty; a finished cell
 * gets none. The whole path over a real kernel is tests/integration/hang-watchdog.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HangWatchdog } from "../../server/kernel/hang-watchdog";
import type { Execution, HangReport } from "../../server/kernel/kernel-execution";
import type { ProcessStack } from "../../server/kernel/stack-summary";

/** The watchdog's timer does not hold the process open (unref): the test does, while it waits for the report. */
async function whileAlive<T>(work: Promise<T>): Promise<T> {
  const alive = setInterval(() => undefined, 1_000);
  try {
    return await work;
  } finally {
    clearInterval(alive);
  }
}

function quietCell(onHang: (report: HangReport) => void): Execution {
  const now = performance.now();
  const sink = { started: () => undefined, console: () => undefined, output: () => undefined, finished: () => undefined, hang: onHang };
  return { id: "e", code: "", ref: null, sink, startedAt: now, acknowledged: true, interruptPending: false, lastProgressAt: now, diagnosed: false };
}

describe("HangWatchdog", () => {
  it("reports a quiet cell once, with the stacks the kernel answered", async () => {
    const stacks: ProcessStack[] = [{ label: "kernel", pid: 1, alive: true, stack: '  File "x.py", line 1, in <module>' }];
    let reportHang: (report: HangReport) => void = () => undefined;
    const reported = new Promise<HangReport>((resolve) => (reportHang = resolve));
    const running = quietCell((report) => reportHang(report));
    const watchdog = new HangWatchdog({ hangAfterMs: 20, running: () => running, collectStacks: () => Promise.resolve(stacks), requestTtyStacks: () => assert.fail("the kernel answered") });
    watchdog.arm();
    const report = await whileAlive(reported);
    watchdog.disarm();
    assert.equal(report.answeredBy, "kernel");
    assert.deepEqual(report.processes, stacks);
    assert.ok(report.idleMs >= 20);
    assert.equal(running.diagnosed, true);
    watchdog.progress();
    assert.equal(running.diagnosed, false, "progress starts the quiet period again");
  });

  it("asks the tty when the kernel does not answer", async () => {
    let tty = 0;
    let reportHang: (report: HangReport) => void = () => undefined;
    const reported = new Promise<HangReport>((resolve) => (reportHang = resolve));
    const running = quietCell((report) => reportHang(report));
    const watchdog = new HangWatchdog({ hangAfterMs: 20, running: () => running, collectStacks: () => Promise.resolve(null), requestTtyStacks: () => (tty += 1) });
    watchdog.arm();
    const report = await whileAlive(reported);
    watchdog.disarm();
    assert.equal(report.answeredBy, "tty");
    assert.deepEqual(report.processes, []);
    assert.equal(tty, 1);
  });
});
