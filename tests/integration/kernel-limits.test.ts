/**
 * Kernels do not pile up, with real kernels over the real socket: idle
 * shutdown (nothing running or queued and nobody viewing, for the period),
 * the cap on live kernels, and the Running kernels commands with the real
 * processes' pids and memory.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { localHost } from "../../server/kernel/kernel-host";
import { KernelSession } from "../../server/kernel/kernel-session";
import { RUNNING_KERNELS_SHUTDOWN_REASON } from "../../server/notebook/kernel-policy";
import type { KernelListing } from "../../server/core/protocol/kernels-model";
import type { KernelStatus } from "../../server/core/protocol/notebook-model";
import type { LabAnswer } from "../../server/core/protocol/ops-lab";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";
import { RunningCell, TestKernel } from "../helpers/test-kernel";

const LIMIT = { timeout: 90_000 };

/** Inserts a code cell with this source and runs it (the stored source: nothing else is sent). */
async function run(client: TestClient, notebookId: string, source: string): Promise<{ cellId: string; ack: Awaited<ReturnType<TestClient["send"]>> }> {
  const cellId = `c${randomUUID().slice(0, 8)}`;
  const inserted = await client.send({ op: "insert-cell", notebookId, index: 0, cell: { id: cellId, kind: "code", source } });
  assert.deepEqual(inserted, { ok: true });
  const ack = await client.send({ op: "execute", notebookId, cellIds: [cellId] });
  return { cellId, ack };
}

async function runToEnd(client: TestClient, notebookId: string, source: string): Promise<string> {
  const { cellId, ack } = await run(client, notebookId, source);
  assert.deepEqual(ack, { ok: true });
  const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
  assert.equal(finished.type === "cell-finished" && finished.status, "ok");
  return cellId;
}

async function open(client: TestClient, notebookId: string) {
  const opened = await client.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook, "open answers with a snapshot");
  return opened.notebook;
}

/** The next kernel status of that notebook's kernel (seen by the server, whoever is viewing) that passes `test`. */
async function nextStatus(harness: SocketHarness, notebookId: string, test: (status: KernelStatus) => boolean): Promise<KernelStatus> {
  const runtime = await harness.lab.hub.get(notebookId);
  assert.ok(runtime, `notebook ${notebookId} is open on the server`);
  if (test(runtime.kernel.status)) return runtime.kernel.status;
  return new Promise((resolve) => {
    const off = runtime.kernel.onStatus((status) => {
      if (!test(status)) return;
      off();
      resolve(status);
    });
  });
}

async function kernelPid(harness: SocketHarness, notebookId: string): Promise<number> {
  const status = (await harness.lab.hub.get(notebookId))?.kernel.status;
  assert.ok(status && "info" in status, `the kernel of ${notebookId} runs`);
  return status.info.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ESRCH") return false;
    throw error;
  }
}

/** Polls on the event loop, for what has no event (another process's exit). */
async function waitUntil(condition: () => boolean, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function kernelsOf(ack: LabAnswer<"list-kernels" | "shutdown-kernel" | "shutdown-listed-kernel" | "shutdown-all-kernels">): KernelListing {
  assert.ok(ack.ok, ack.ok ? "" : ack.error);
  assert.ok(ack.kernels, "the answer carries the kernel list");
  return ack.kernels;
}

const isShutdown = (status: KernelStatus) => status.state === "shutdown";

describe("idle shutdown", () => {
  const IDLE_MS = 1_500;
  let harness: SocketHarness;
  before(async () => {
    harness = await SocketHarness.start({ kernelLimits: { maxKernels: 16, idleShutdownMs: IDLE_MS } });
  });
  after(async () => {
    await harness.close();
  });

  it("shuts down a kernel once nothing runs and nobody views its notebook for the period, and keeps the notebook", LIMIT, async () => {
    const nb = await harness.createNotebook("left alone");
    const viewer = await harness.client();
    await open(viewer, nb);
    const cellId = await runToEnd(viewer, nb, "x = 41\nprint('kept')");
    const pid = await kernelPid(harness, nb);
    const culled = nextStatus(harness, nb, isShutdown);

    const leftAt = Date.now();
    viewer.close();
    const status = await culled;
    const shutDownAfterMs = Date.now() - leftAt;

    assert.deepEqual(status, { state: "shutdown", reason: "shut down after 1.5 s idle; run a cell to start a new kernel" });
    assert.ok(shutDownAfterMs >= IDLE_MS, `not before the idle period (${shutDownAfterMs} ms after the viewer left)`);
    assert.equal(alive(pid), false, "the kernel process is gone");

    const back = await harness.client();
    try {
      const doc = await open(back, nb);
      assert.deepEqual(doc.kernel, status, "a returning viewer reads why");
      const cell = doc.cells.find((candidate) => candidate.id === cellId);
      assert.equal(cell?.source, "x = 41\nprint('kept')", "the notebook is untouched");
      assert.deepEqual(cell?.outputs, [{ kind: "stream", name: "stdout", text: "kept\n" }]);
      const fresh = await runToEnd(back, nb, "print('x' in globals())");
      const streamed = back.events.filter((event) => event.type === "cell-stream" && event.cellId === fresh).map((event) => (event.type === "cell-stream" ? event.text : ""));
      assert.deepEqual(streamed, ["False\n"], "running a cell starts a new kernel");
      assert.notEqual(await kernelPid(harness, nb), pid);
    } finally {
      back.close();
    }
  });

  it("a hidden tab does not keep a kernel: its viewer is warned first, then the kernel is shut down while the tab stays connected", LIMIT, async () => {
    const nb = await harness.createNotebook("forgotten tab");
    const viewer = await harness.client();
    try {
      await open(viewer, nb);
      await runToEnd(viewer, nb, "w = 1");
      const culled = nextStatus(harness, nb, isShutdown);
      const hiddenAt = Date.now();
      assert.deepEqual(await viewer.send({ op: "presence", notebookId: nb, visible: false }), { ok: true });
      const status = await culled;
      assert.equal(status.state, "shutdown");
      assert.ok(Date.now() - hiddenAt >= IDLE_MS, "not before the idle period");
      await viewer.waitFor((event) => event.type === "kernel-status" && event.status.state === "shutdown");
      const warning = viewer.events.find((event) => event.type === "kernel-idle-warning" && event.shutdownAt !== null);
      assert.ok(warning && warning.type === "kernel-idle-warning" && warning.shutdownAt !== null, "the tab was told first");
      const warnedAt = viewer.events.indexOf(warning);
      const endedAt = viewer.events.findIndex((event) => event.type === "kernel-status" && event.status.state === "shutdown");
      assert.ok(warnedAt >= 0 && warnedAt < endedAt, "the warning came before the shutdown");
      assert.ok(Math.abs(Date.parse(warning.shutdownAt) - (hiddenAt + IDLE_MS)) < 1_000, "it says when");
      assert.equal(viewer.socket.connected, true, "the tab is still connected");
    } finally {
      viewer.close();
    }
  });

  it("a visible tab keeps its kernel; showing a hidden tab again clears the warning", LIMIT, async () => {
    const nb = await harness.createNotebook("tab shown again");
    const viewer = await harness.client();
    try {
      await open(viewer, nb);
      await runToEnd(viewer, nb, "v = 1");
      await viewer.send({ op: "presence", notebookId: nb, visible: false });
      await viewer.waitFor((event) => event.type === "kernel-idle-warning" && event.shutdownAt !== null);
      await viewer.send({ op: "presence", notebookId: nb, visible: true });
      await viewer.waitFor((event) => event.type === "kernel-idle-warning" && event.shutdownAt === null);
      const live = new Map(harness.lab.hub.kernels.live());
      assert.equal(live.get(nb)?.state, "idle", "the kernel is kept");
      assert.equal(live.get(nb)?.viewers, 1);
    } finally {
      viewer.close();
    }
  });

  it("keeps a kernel with a running cell or a viewer, and ends each once neither holds", LIMIT, async () => {
    const flagDir = mkdtempSync(path.join(tmpdir(), "mgpulab-cull-"));
    const flag = path.join(flagDir, "go");
    try {
      const viewed = await harness.createNotebook("viewed");
      const watcher = await harness.client();
      await open(watcher, viewed);
      await runToEnd(watcher, viewed, "y = 1");

      const running = await harness.createNotebook("running");
      const starter = await harness.client();
      await open(starter, running);
      const wait = `import os, time\nwhile not os.path.exists(${JSON.stringify(flag)}):\n    time.sleep(0.05)\nprint('done')`;
      const { cellId: runningCell, ack } = await run(starter, running, wait);
      assert.deepEqual(ack, { ok: true });
      await starter.waitFor((event) => event.type === "cell-run-state" && event.cellId === runningCell && event.runState === "running");
      starter.close();

      // The control: unused from now on, so the sweep that ends it has seen the other two
      // in their state for longer than the period.
      const unused = await harness.createNotebook("unused");
      const passerby = await harness.client();
      await open(passerby, unused);
      await runToEnd(passerby, unused, "z = 1");
      const unusedCulled = nextStatus(harness, unused, isShutdown);
      passerby.close();
      await unusedCulled;

      const live = new Map(harness.lab.hub.kernels.live());
      assert.equal(live.get(viewed)?.state, "idle", "the viewed kernel is kept");
      assert.equal(live.get(viewed)?.viewers, 1);
      assert.equal(live.get(running)?.state, "busy", "the kernel running a cell is kept");
      assert.equal(live.get(running)?.viewers, 0);
      assert.equal(alive(await kernelPid(harness, viewed)), true);
      assert.equal(alive(await kernelPid(harness, running)), true);

      const runningCulled = nextStatus(harness, running, isShutdown);
      writeFileSync(flag, "");
      assert.equal((await runningCulled).state, "shutdown", "ended once its cell finished");

      const viewedCulled = nextStatus(harness, viewed, isShutdown);
      watcher.close();
      assert.equal((await viewedCulled).state, "shutdown", "ended once its viewer left");
    } finally {
      rmSync(flagDir, { recursive: true, force: true });
    }
  });
});

describe("the kernel cap", () => {
  let harness: SocketHarness;
  let client: TestClient;
  before(async () => {
    harness = await SocketHarness.start({ kernelLimits: { maxKernels: 2, idleShutdownMs: null } });
    client = await harness.client();
  });
  after(async () => {
    client.close();
    await harness.close();
  });

  it("refuses one kernel more with what to do, ends nobody's kernel, and admits after a shutdown", LIMIT, async () => {
    const [a, b, c] = [await harness.createNotebook("a"), await harness.createNotebook("b"), await harness.createNotebook("c")];
    for (const nb of [a, b, c]) await open(client, nb);
    await runToEnd(client, a, "1");
    await runToEnd(client, b, "2");
    const pids = [await kernelPid(harness, a), await kernelPid(harness, b)];

    const refused = await run(client, c, "print('third')");
    assert.deepEqual(refused.ack, { ok: false, error: "this lab runs at most 2 kernels; shut one down in Running kernels (2 idle)", code: "limit" });
    const restart = await client.send({ op: "restart", notebookId: c });
    assert.deepEqual(restart, { ok: false, error: "this lab runs at most 2 kernels; shut one down in Running kernels (2 idle)", code: "limit" });
    const doc = await open(client, c);
    assert.equal(doc.kernel.state, "not-started");
    assert.equal(doc.cells.find((cell) => cell.id === refused.cellId)?.runState, "idle", "the refused cell is not left queued");
    assert.deepEqual(pids.map(alive), [true, true], "no kernel was ended to make room");

    const remaining = kernelsOf(await client.sendLab({ op: "shutdown-kernel", notebookId: a }));
    assert.deepEqual(remaining.kernels.map((kernel) => kernel.notebookId), [b]);
    assert.equal(alive(pids[0]!), false);
    await runToEnd(client, c, "print('third')");
    assert.equal((await open(client, c)).kernel.state, "idle");
  });

  it("lets only one of two concurrent starts take the last place", LIMIT, async () => {
    const [d, e] = [await harness.createNotebook("d"), await harness.createNotebook("e")];
    for (const nb of [d, e]) await open(client, nb);
    const running = kernelsOf(await client.sendLab({ op: "list-kernels" })).kernels;
    assert.equal(running.length, 2);
    await client.sendLab({ op: "shutdown-kernel", notebookId: running[0]!.notebookId });

    const [first, second] = await Promise.all([run(client, d, "1"), run(client, e, "1")]);
    const oks = [first.ack, second.ack].filter((ack) => ack.ok);
    assert.equal(oks.length, 1, `exactly one start admitted: ${JSON.stringify([first.ack, second.ack])}`);
    const listed = kernelsOf(await client.sendLab({ op: "list-kernels" })).kernels;
    assert.equal(listed.length, 2);
  });
});

describe("Running kernels commands", () => {
  let harness: SocketHarness;
  let client: TestClient;
  before(async () => {
    harness = await SocketHarness.start();
    client = await harness.client();
  });
  after(async () => {
    client.close();
    await harness.close();
  });

  it("lists each live kernel with its real pid, its process tree's memory and its viewers", LIMIT, async () => {
    const nb = await harness.createNotebook("with a child process");
    await open(client, nb);
    const cellId = await runToEnd(
      client,
      nb,
      "import subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\nprint(child.pid)",
    );
    const printed = client.events.filter((event) => event.type === "cell-stream" && event.cellId === cellId).map((event) => (event.type === "cell-stream" ? event.text : "")).join("");
    const childPid = Number(printed.trim());
    const pid = await kernelPid(harness, nb);
    assert.ok(alive(childPid));

    const before = Date.now();
    const listing = kernelsOf(await client.sendLab({ op: "list-kernels" }));
    assert.equal(listing.maxKernels, 16);
    assert.equal(listing.idleShutdownMs, 60 * 60_000);
    assert.match(listing.memoryMethod, /VmRSS/);
    const kernel = listing.kernels.find((candidate) => candidate.notebookId === nb);
    assert.ok(kernel, "the kernel is listed");
    assert.equal(kernel.title, "with a child process");
    assert.equal(kernel.state, "idle");
    assert.equal(kernel.pid, pid);
    assert.equal(kernel.viewers, 1);
    assert.equal(kernel.executions, 0);
    assert.equal(kernel.idleShutdownAt, null, "viewed: not due for idle shutdown");
    assert.ok(Date.parse(kernel.startedAt) <= Date.parse(kernel.lastActivityAt) && Date.parse(kernel.lastActivityAt) <= before);

    // The same processes measured by procps: the kernel and the child it started.
    const psRss = execFileSync("ps", ["-o", "rss=", "-p", `${pid},${childPid}`], { encoding: "utf8" })
      .trim()
      .split(/\s+/)
      .reduce((sum, kb) => sum + Number(kb) * 1024, 0);
    assert.ok(kernel.memory, "memory is measured");
    assert.ok(kernel.memory.processes >= 2, `the child is in the tree (${kernel.memory.processes} processes)`);
    assert.ok(kernel.memory.rssBytes > 5e6, `a Python kernel holds megabytes (${kernel.memory.rssBytes})`);
    assert.ok(Math.abs(kernel.memory.rssBytes - psRss) / psRss < 0.15, `close to ps's ${psRss} bytes: ${kernel.memory.rssBytes}`);

    const closed = client.waitFor((event) => event.type === "kernel-status" && event.status.state === "shutdown");
    const remaining = kernelsOf(await client.sendLab({ op: "shutdown-kernel", notebookId: nb }));
    assert.equal(remaining.kernels.some((candidate) => candidate.notebookId === nb), false);
    assert.equal(alive(pid), false, "shutdown-kernel ended the kernel's process");
    await waitUntil(() => !alive(childPid)); // SIGHUP from the kernel's closed tty; an exit has no event to wait on here
    const event = await closed;
    assert.deepEqual(event.type === "kernel-status" && event.status, { state: "shutdown", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
  });

  it("shuts every kernel down at once, and refuses a malformed command clearly", LIMIT, async () => {
    const notebooks = [await harness.createNotebook("one"), await harness.createNotebook("two")];
    for (const nb of notebooks) {
      await open(client, nb);
      await runToEnd(client, nb, "1");
    }
    const pids = await Promise.all(notebooks.map((nb) => kernelPid(harness, nb)));
    const remaining = kernelsOf(await client.sendLab({ op: "shutdown-all-kernels" }));
    assert.deepEqual(remaining.kernels, []);
    assert.deepEqual(pids.map(alive), [false, false]);

    const bad = await client.sendLab({ op: "shutdown-kernel", notebookId: "../../etc" });
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? "" : bad.error, /notebookId: ids are letters/);
  });
});


describe("shutdowns racing starts", () => {
  it("ends a kernel shut down while it was starting, leaving no process", LIMIT, async () => {
    const session = new KernelSession({ launch: () => ({ host: localHost(), gpus: 0 }) });
    const pids: number[] = [];
    session.onStatus((status) => {
      if ("info" in status) pids.push(status.info.pid);
    });
    const cell = new RunningCell();
    session.execute("1", cell.sink());
    assert.equal(session.status.state, "starting");
    await session.shutdown(RUNNING_KERNELS_SHUTDOWN_REASON);
    assert.deepEqual(session.status, { state: "shutdown", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
    assert.equal(session.pid, null);
    assert.equal((await cell.done).status, "aborted");
    assert.deepEqual(pids.filter(alive), [], "the process that was starting is gone");
  });


  it("leaves the status of a kernel started while the old one exited standing (so it is counted and listed)", LIMIT, async () => {
    const kernel = await TestKernel.start();
    try {
      const oldPid = kernel.session.pid;
      const states: string[] = [];
      kernel.session.onStatus((status) => states.push(status.state));
      const stopping = kernel.session.shutdown("shut down after 1 s idle; run a cell to start a new kernel");
      const cell = kernel.submit("import os\nos.getpid()");
      await stopping;
      const result = await cell.done;
      assert.equal(result.status, "ok");
      assert.notEqual(result.result, String(oldPid));
      assert.equal(kernel.session.status.state, "idle");
      assert.equal(states.includes("shutdown"), false, `no shutdown reported over the new kernel: ${states.join(" → ")}`);
      assert.equal(result.result, String(kernel.session.pid));
    } finally {
      await kernel.close();
    }
  });
});
