/**
 * Kernels outlive the lab server: the real server runs a numbered stream on
 * the local host's agent; it is stopped (SIGTERM: a deploy) or killed
 * (SIGKILL: a crash), or its link to the agent drops, while the cell prints.
 * A fresh server on the same database takes the kernel over from the stored
 * read position: the cell finishes, every line is stored exactly once and in
 * order, and the viewer of the new server sees the rest arrive. When no
 * server comes back within the agent's lease, the agent ends the kernel's
 * whole process tree, and the next server says why the run ended.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openDatabase, RunRepository } from "../../server/persistence";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { shownText, storedText } from "../helpers/cell-text";
import { running, waitUntil } from "../helpers/processes";

const LIMIT = { timeout: 180_000 };
const LINES = 300;
/** Numbered lines over ~3 s, then "done": long enough to stop the server under it. */
const NUMBERED = `import time\nfor i in range(${LINES}):\n    print(f'line {i}', flush=True)\n    time.sleep(0.01)\nprint('done')`;

/** Every numbered line exactly once, in order, then "done". */
function assertComplete(text: string): void {
  const lines = text.split("\n").filter(Boolean);
  const expected = [...Array.from({ length: LINES }, (_, i) => `line ${i}`), "done"];
  const doubled = lines.filter((line, i) => lines.indexOf(line) !== i);
  const missing = expected.filter((line) => !lines.includes(line));
  assert.deepEqual({ doubled: doubled.slice(0, 5), missing: missing.slice(0, 5) }, { doubled: [], missing: [] });
  assert.deepEqual(lines, expected);
}

async function startNumbered(server: LabServer, title: string): Promise<{ client: TestClient; notebookId: string; cellId: string }> {
  const client = await connectClient(server.url);
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const notebookId = created.notebook.id;
  const opened = await client.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook);
  const cellId = opened.notebook.cells[0]!.id;
  const ran = await client.run(notebookId, { [cellId]: NUMBERED });
  assert.ok(ran.ok, JSON.stringify(ran));
  await client.waitFor(() => shownText(client.events, cellId).split("\n").length > 40);
  return { client, notebookId, cellId };
}

/** A new server on the same data: opens the notebook and waits for the cell to finish there. */
async function finishOnNewServer(dataDir: string, env: Record<string, string>, notebookId: string, cellId: string): Promise<{ doc: NotebookDocument; shown: string; server: LabServer }> {
  const server = await LabServer.start({ ...env, MGPULAB_DATA_DIR: dataDir });
  const viewer = await connectClient(server.url);
  const opened = await viewer.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook);
  const finished = opened.notebook.cells.find((cell) => cell.id === cellId)?.runState === "idle";
  if (!finished) await viewer.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
  const reopened = await viewer.send({ op: "open", notebookId });
  assert.ok(reopened.ok && reopened.notebook);
  // What the viewer's page shows: the snapshot, then the events numbered after it (as the page applies them).
  const after = opened.journal?.seq ?? 0;
  const later = viewer.events.filter((_event, i) => (viewer.seqs[i] ?? 0) > after);
  const shown = storedText(opened.notebook, cellId) + shownText(later, cellId);
  viewer.close();
  return { doc: reopened.notebook, shown, server };
}

async function runOf(dataDir: string, notebookId: string): Promise<{ status: string; exitReason: string | null }> {
  const db = await openDatabase({ dataDir });
  try {
    const [run] = await new RunRepository(db.prisma).list(notebookId);
    assert.ok(run);
    return { status: run.status, exitReason: run.exitReason };
  } finally {
    await db.close();
  }
}

describe("kernels outlive the lab server", () => {
  let dataDir: string;
  let env: Record<string, string>;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-takeover-"));
    env = { MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents") };
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`${signal} while a cell prints: the next server takes the kernel over, and every line is stored once, in order`, LIMIT, async () => {
      const first = await LabServer.start({ ...env, MGPULAB_DATA_DIR: dataDir });
      const { client, notebookId, cellId } = await startNumbered(first, `takeover ${signal}`);
      await first.stop(signal);
      const seen = shownText(client.events, cellId);
      client.close();
      assert.ok(!seen.includes("done"), "the server was stopped while the cell still printed");

      const { doc, shown, server } = await finishOnNewServer(dataDir, env, notebookId, cellId);
      try {
        assertComplete(storedText(doc, cellId));
        assertComplete(shown);
        assert.ok(storedText(doc, cellId).startsWith(seen), "what the first viewer saw is the start of what is stored");
        const lastRun = doc.cells.find((cell) => cell.id === cellId)?.lastRun;
        assert.equal(lastRun?.status, "ok");
        // The kernel's own clock, not the takeover's: the cell slept 300 × 10 ms, most of it before the takeover.
        assert.ok(lastRun && lastRun.durationMs >= LINES * 10, `stored duration ${lastRun?.durationMs} ms for a run of at least ${LINES * 10} ms`);
        assert.ok(server.logs.some((line) => line.includes("took over the kernel")), "the new server says it took the kernel over");
      } finally {
        await server.stop("SIGTERM");
      }
      assert.equal((await runOf(dataDir, notebookId)).status, "running", "after a SIGTERM the run goes on with the agent");
    });
  }

  it("the link to the host agent drops while a cell prints: the server reconnects and loses nothing", LIMIT, async () => {
    const server = await LabServer.start({ ...env, MGPULAB_DATA_DIR: dataDir });
    try {
      const { client, notebookId, cellId } = await startNumbered(server, "dropped link");
      // The link's local end is the server's PTY child running the agent bootstrap (the relay).
      const relays = execFileSync("pgrep", ["-P", String(server.pid), "-f", "python"], { encoding: "utf8" }).split("\n").filter(Boolean);
      assert.ok(relays.length >= 1, "the server has a link process");
      for (const pid of relays) process.kill(Number(pid), "SIGKILL");
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      const opened = await client.send({ op: "open", notebookId });
      assert.ok(opened.ok && opened.notebook);
      assertComplete(storedText(opened.notebook, cellId));
      assertComplete(shownText(client.events, cellId));
      assert.ok(server.logs.some((line) => line.includes("reconnecting")), "the server says it lost and re-opened the link");
      client.close();
    } finally {
      await server.stop("SIGTERM");
    }
  });

  it("no server within the lease: the agent ends the kernel's whole process tree, and the next server says why the run ended", LIMIT, async () => {
    const leaseEnv = { ...env, MGPULAB_KERNEL_LEASE_SECONDS: "2", MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents-lease") };
    const server = await LabServer.start({ ...leaseEnv, MGPULAB_DATA_DIR: dataDir });
    const client = await connectClient(server.url);
    const created = await client.sendLab({ op: "create-notebook", title: "lease" });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const cellId = opened.notebook.cells[0]!.id;
    // A grandchild in its own session (as torchrun's workers are), then a long wait.
    const code = "import subprocess, time\np = subprocess.Popen(['sleep', '600'], start_new_session=True)\nprint(f'child {p.pid}', flush=True)\ntime.sleep(600)";
    await client.run(notebookId, { [cellId]: code });
    await client.waitFor(() => /child \d+/.test(shownText(client.events, cellId)));
    const child = Number(/child (\d+)/.exec(shownText(client.events, cellId))![1]);
    client.close();
    await server.stop("SIGKILL");

    // The agent removes its socket when it has ended every kernel tree and exits.
    const socketDir = path.join(dataDir, "agents-lease");
    await waitUntil(() => !socketExists(socketDir), 30_000, "the agent ends after its lease");
    // The agent removes its socket as it ends the trees; the last child may take a moment more to die (SIGTERM, then SIGKILL).
    await waitUntil(() => !running(child), 10_000, `the setsid grandchild ${child} is gone`);

    const next = await LabServer.start({ ...leaseEnv, MGPULAB_DATA_DIR: dataDir });
    await next.stop("SIGTERM");
    const run = await runOf(dataDir, notebookId);
    assert.equal(run.status, "interrupted");
    assert.match(run.exitReason ?? "", /no lab server was connected/);
  });
});

function socketExists(dir: string): boolean {
  try {
    return execFileSync("find", [dir, "-name", "agent.sock"], { encoding: "utf8" }).trim() !== "";
  } catch {
    return existsSync(dir) && false;
  }
}
