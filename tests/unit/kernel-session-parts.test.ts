/**
 * The parts of a kernel session, each on its own (server/kernel/): replies
 * waited for by id (pending-replies.ts), the requests beside cell runs
 * (kernel-requests.ts), the cells' queue and where output goes
 * (execution-queue.ts), the status board with the link's trouble
 * (kernel-status.ts), and the description of a started kernel
 * (kernel-launch.ts). The whole session runs real kernels in
 * tests/integration/kernel*.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExecutionStatus, KernelLinkTrouble, KernelStatus } from "../../server/core/protocol/notebook-model";
import type { KernelRequest } from "../../server/core/protocol/kernel-messages";
import { PendingReplies } from "../../server/kernel/pending-replies";
import { KernelRequests } from "../../server/kernel/kernel-requests";
import { ExecutionQueue } from "../../server/kernel/execution-queue";
import { KernelStatusBoard } from "../../server/kernel/kernel-status";
import { describeKernel } from "../../server/kernel/kernel-launch";
import { restartNotice, type Execution, type ExecutionSink } from "../../server/kernel/kernel-execution";

/** A sink that writes down what reaches it. */
function sink(log: string[], name: string): ExecutionSink {
  return {
    started: () => log.push(`${name} started`),
    console: (text) => log.push(`${name} console ${text}`),
    output: (message) => log.push(`${name} output ${message.type}`),
    finished: ({ status }: { status: ExecutionStatus }) => log.push(`${name} finished ${status}`),
  };
}

function execution(id: string, log: string[]): Execution {
  return { id, code: "", ref: null, sink: sink(log, id), startedAt: 0, acknowledged: false, interruptPending: false, lastProgressAt: 0, diagnosed: false };
}

describe("PendingReplies", () => {
  it("answers the request waiting by its id, once, and gives up after the timeout", async () => {
    const replies = new PendingReplies<string>();
    const sent: string[] = [];
    const asked = replies.ask("a", () => sent.push("a"), 10_000);
    assert.deepEqual(sent, ["a"], "sent once the wait is registered");
    replies.answer("b", "not for a");
    replies.answer("a", "for a");
    replies.answer("a", "again");
    assert.equal(await asked, "for a");
    assert.equal(await replies.ask("c", () => undefined, 5), null);
  });
});

describe("KernelRequests", () => {
  it("asks a live idle kernel, and answers null at once when it is busy or gone", async () => {
    const sent: KernelRequest[] = [];
    let idle = true;
    let alive = true;
    const requests = new KernelRequests({ channel: () => ({ alive, send: (request) => void sent.push(request) }), idle: () => idle });
    const completing = requests.complete("pri", 3, 10_000);
    const request = sent[0];
    assert.ok(request?.type === "complete");
    requests.answer({ type: "complete_reply", id: request.id, matches: [{ text: "print", type: "function" }], cursorStart: 0, cursorEnd: 3 });
    assert.deepEqual((await completing)?.matches, [{ text: "print", type: "function" }]);
    idle = false;
    assert.equal(await requests.inspect("print", 5), null, "never waits behind a running cell");
    const stacks = requests.collectStacks(10_000);
    const asked = sent[1];
    assert.ok(asked?.type === "stacks", "stacks are asked even while a cell runs");
    requests.answer({ type: "stacks", id: asked.id, processes: [] });
    assert.deepEqual(await stacks, []);
    alive = false;
    assert.equal(await requests.collectStacks(), null);
    await assert.rejects(requests.ping(), /kernel is not running/);
  });
});

describe("ExecutionQueue", () => {
  it("runs one cell at a time in order, and output while idle goes to the last cell", () => {
    const log: string[] = [];
    const cells = new ExecutionQueue();
    cells.add(execution("a", log));
    cells.add(execution("b", log));
    assert.equal(cells.pending, 2);
    assert.equal(cells.next()?.id, "a");
    assert.equal(cells.next(), null, "b waits while a runs");
    cells.sinkFor("a")?.output({ type: "stream", id: "a", name: "stdout", text: "x" });
    assert.equal(cells.finish("b", { status: "ok", executionCount: 1, durationMs: 1 }), false, "only the running cell finishes");
    assert.equal(cells.finish("a", { status: "ok", executionCount: 1, durationMs: 1 }), true);
    cells.sinkFor(null)?.console("late thread output");
    assert.equal(cells.next()?.id, "b");
    cells.failRunning("kernel-died");
    assert.equal(cells.pending, 0);
    assert.deepEqual(log, ["a output stream", "a finished ok", "a console late thread output", "b finished kernel-died"]);
  });

  it("ends waiting cells without running them, and forgets where output went", () => {
    const log: string[] = [];
    const cells = new ExecutionQueue();
    cells.adopt(execution("resumed", log));
    cells.add(execution("waiting", log));
    cells.abortWaiting("no-kernel");
    cells.forget({ running: true });
    assert.equal(cells.sinkFor(null), null);
    assert.deepEqual(log, ["waiting finished no-kernel"]);
  });
});

describe("KernelStatusBoard", () => {
  it("tells each listener every status, with the link's trouble beside idle, busy and interrupting only", () => {
    const board = new KernelStatusBoard();
    const seen: KernelStatus[] = [];
    const stop = board.onChange((status) => seen.push(status));
    const listeners: Array<(trouble: KernelLinkTrouble | null) => void> = [];
    const report = (trouble: KernelLinkTrouble | null) => listeners.forEach((listener) => listener(trouble));
    let current = true;
    board.watchLink({ onLinkTrouble: (listener) => (listeners.push(listener), () => undefined) }, () => current);
    assert.equal(listeners.length, 1, "the board follows the link");
    const info = { pid: 1, hostname: "h", python: "3.11", executable: "python3", torch: null, deviceMode: "CPU" };
    board.set({ state: "idle", info });
    const trouble: KernelLinkTrouble = { state: "stalled", host: "gpu-1", since: 1000 };
    report(trouble);
    assert.deepEqual(board.status, { state: "idle", info, link: trouble });
    board.set({ state: "restarting" });
    assert.deepEqual(board.status, { state: "restarting" });
    current = false;
    report(null);
    assert.equal(seen.length, 3, "a late report of an old kernel's link changes nothing");
    stop();
    board.set({ state: "not-started" });
    assert.equal(seen.length, 3);
  });
});

describe("describeKernel and restartNotice", () => {
  it("say what the kernel runs on and why a new one started, in words", () => {
    const hello = { type: "hello" as const, protocol: 1, pid: 7, hostname: "gpu-box", python: "3.12", executable: "/usr/bin/python3", torch: "2.3", cudaDevices: 0 };
    assert.match(describeKernel(hello).deviceMode, /CPU only/);
    const placed = describeKernel({ ...hello, cudaDevices: 2 }, { hostId: "gpu-1", agentKernelId: "k", gpus: ["0", "1"], onThisMachine: false }, "GPU box");
    assert.equal(placed.deviceMode, "2× CUDA GPU");
    assert.deepEqual(placed.host, { id: "gpu-1", label: "GPU box" });
    assert.equal(restartNotice("it ran out of memory.  "), "[kernel] The previous kernel stopped (it ran out of memory). Running this cell started a new one: variables and imports from before are gone.\n");
  });
});
