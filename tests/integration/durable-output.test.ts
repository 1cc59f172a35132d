/**
 * What a viewer has seen is on disk, and a stop is not an abort: the real
 * server process streams a cell to a real client and is killed (SIGKILL) or
 * stopped (SIGTERM) mid-run; a fresh server on the same database must serve
 * every line the client was shown. Here no server comes back within the host
 * agent's lease (1 s), so the agent ends the kernel and the run must end at
 * the last thing the lab heard (kernel-takeover.test.ts covers the server
 * that does come back). A stop (SIGTERM) leaves the kernel running with its
 * agent: the cell is not ended, and everything shown is stored.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openDatabase, RunRepository } from "../../server/persistence";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { shownText, storedText } from "../helpers/cell-text";

const LIMIT = { timeout: 180_000 };
/** Prints numbered lines steadily, forever: the server dies under it. */
const TICKS = "import time\nfor i in range(10**6):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.002)";

/** A new notebook on `server` whose first cell runs `source` (the ticking loop unless told). */
async function startRunning(server: LabServer, title: string, source = TICKS): Promise<{ client: TestClient; notebookId: string; cellId: string }> {
  const client = await connectClient(server.url);
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const notebookId = created.notebook.id;
  const opened = await client.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook);
  const cellId = opened.notebook.cells[0]!.id;
  const ran = await client.run(notebookId, { [cellId]: source });
  assert.ok(ran.ok, JSON.stringify(ran));
  return { client, notebookId, cellId };
}

/** Waits until the client has been shown at least `lines` lines of the cell. */
async function waitForLines(client: TestClient, cellId: string, lines: number): Promise<void> {
  await client.waitFor(() => shownText(client.events, cellId).split("\n").length > lines);
}

/** The host agent keeps kernels 1 s after its last link, in a directory of this test's own. */
function agentEnv(dataDir: string): Record<string, string> {
  return { MGPULAB_DATA_DIR: dataDir, MGPULAB_KERNEL_LEASE_SECONDS: "1", MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents") };
}

/** Waits until the local agent has ended its kernels and exited after its lease (it removes its socket). */
async function agentGone(dataDir: string): Promise<void> {
  const root = path.join(dataDir, "agents");
  const sockets = (): boolean => existsSync(root) && readdirSync(root, { recursive: true }).some((entry) => String(entry).endsWith("agent.sock"));
  const deadline = Date.now() + 30_000;
  // Another process's exit: polled, with a deadline.
  while (sockets()) {
    if (Date.now() > deadline) throw new Error("the host agent did not end after its lease");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a fresh server on the same database serves of the notebook (the server is stopped again after); `logs`: what it said. */
async function reopen(dataDir: string, notebookId: string, logs: string[] = []): Promise<NotebookDocument> {
  await agentGone(dataDir);
  const server = await LabServer.start(agentEnv(dataDir));
  try {
    const viewer = await connectClient(server.url);
    const opened = await viewer.send({ op: "open", notebookId });
    viewer.close();
    assert.ok(opened.ok && opened.notebook, `the notebook opens on the next server: ${JSON.stringify(opened)}`);
    return opened.notebook;
  } finally {
    await server.stop("SIGKILL");
    logs.push(...server.logs);
  }
}

/** A server's log lines that are not routine (pino's warnings and errors, and anything on stderr), for a failure's message. */
function unusualLogs(logs: readonly string[]): string {
  const unusual = logs.filter((line) => !line.startsWith('{"level":30,'));
  return unusual.length === 0 ? "nothing unusual" : unusual.slice(-12).join("\n");
}

describe("what a viewer has seen survives the server", () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-durable-"));
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const attempt of [1, 2, 3]) {
    it(`SIGKILL while a cell streams: every line the client saw is served afterwards, and the run ends where the lab last heard it (attempt ${attempt})`, LIMIT, async () => {
      const server = await LabServer.start(agentEnv(dataDir));
      const { client, notebookId, cellId } = await startRunning(server, `sigkill ${attempt}`);
      await waitForLines(client, cellId, 100 * attempt);
      // Killed at whatever point the stream has reached; the client keeps what it was shown.
      const killedAt = Date.now();
      await server.stop("SIGKILL");
      const seen = shownText(client.events, cellId);
      client.close();
      const started = client.events.find((event) => event.type === "cell-run-state" && event.cellId === cellId && event.runState === "running");
      assert.ok(started && seen.length > 0);

      // A while later (the old behaviour stretched the run to this moment).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const restartedAt = Date.now();
      const doc = await reopen(dataDir, notebookId);
      {
        const stored = storedText(doc, cellId);
        const seenLines = seen.split("\n").filter(Boolean);
        assert.ok(stored.startsWith(seen), `stored output holds every line shown (${seenLines.length} shown; last shown ${JSON.stringify(seenLines.at(-1))}, stored ends ${JSON.stringify(stored.slice(-40))})`);
        const cell = doc.cells.find((candidate) => candidate.id === cellId)!;
        assert.equal(cell.lastRun?.status, "interrupted");
        const db = await openDatabase({ dataDir });
        try {
          const [run] = await new RunRepository(db.prisma).list(notebookId);
          assert.ok(run?.endedAt);
          assert.ok(run.endedAt.getTime() <= killedAt + 250, `the run ends by the kill (${killedAt - run.endedAt.getTime()} ms before it), not at the restart ${restartedAt - run.endedAt.getTime()} ms later`);
          const executions = await new RunRepository(db.prisma).listExecutions(run.id);
          const execution = executions.find((candidate) => candidate.cellId === cellId)!;
          assert.ok(execution.endedAt && execution.endedAt.getTime() <= killedAt + 250);
          assert.ok(cell.lastRun!.durationMs <= killedAt + 250 - execution.startedAt!.getTime(), `duration ${cell.lastRun!.durationMs} ms ends by the kill`);
        } finally {
          await db.close();
        }
      }
    });
  }

  it("SIGKILL while a cell floods past its output budget: the tail the client was shown is served afterwards", LIMIT, async () => {
    // A database and host agent of its own: no agent of the tests before it is still ending its lease here.
    const floodDir = mkdtempSync(path.join(tmpdir(), "mgpulab-durable-flood-"));
    const server = await LabServer.start(agentEnv(floodDir));
    const reopenLogs: string[] = [];
    try {
      const flood = "import time\nfor i in range(10**7):\n    print(f'line {i:08d} ' + 'x' * 70)\n    if i % 200 == 0: time.sleep(0.01)";
      const { client, notebookId, cellId } = await startRunning(server, "flood", flood);
      const tails = () => client.events.filter((event): event is Extract<NotebookEvent, { type: "cell-stream-tail" }> => event.type === "cell-stream-tail" && event.cellId === cellId);
      // Past the budget by a few tails, however fast this machine lets the kernel print (a tail goes out every 250 ms).
      await client.waitFor(() => tails().filter((tail) => tail.elidedBytes > 0).length >= 3);
      await server.stop("SIGKILL");
      const lastTail = tails().at(-1)!;
      client.close();
      // The agent reads the tty in chunks that end anywhere, so the tail shown may end inside a line, even
      // right after a line's last "x" and before its "\n": only lines followed by "\n" were shown whole.
      const shownText = lastTail.tail.map((segment) => segment.text).join("");
      const shownPieces = shownText.split("\n");
      const shownPartial = shownPieces.pop()!;
      const shownLines = shownPieces.filter((line) => /^line \d{8} x{70}$/.test(line));
      const shown = `${tails().length} tails shown, the last with ${lastTail.elidedBytes} bytes elided and ${shownLines.length} whole lines, ending ${JSON.stringify(shownText.slice(-40))}`;
      assert.ok(lastTail.elidedBytes > 0 && shownLines.length > 10, shown);

      const doc = await reopen(floodDir, notebookId, reopenLogs);
      const cell = doc.cells.find((candidate) => candidate.id === cellId)!;
      const stored = storedText(doc, cellId);
      const lineNumber = (line: string): number => Number(line.slice(5, 13));
      const lastShown = lineNumber(shownLines.at(-1)!);
      const storedNumbers = stored.split("\n").filter((line) => /^line \d{8} x{70}$/.test(line)).map(lineNumber);
      const storedTailFirst = storedNumbers.find((n, i) => i > 0 && n !== storedNumbers[i - 1]! + 1);
      // Everything a failure needs to be understood from CI's output alone.
      const story = (): string =>
        `${shown}; stored: outputs ${JSON.stringify(cell.outputs.map((output) => (output.kind === "stream" ? `${output.name} ${output.text.length}` : output.kind === "elided" ? `elided ${output.elidedBytes}` : output.kind)))}, ` +
        `lines ${storedNumbers[0]}..${storedNumbers.at(-1)} with the tail from line ${storedTailFirst}, ending ${JSON.stringify(stored.slice(-40))}; ` +
        `the flooding server said: ${unusualLogs(server.logs)}; the next server said: ${unusualLogs(reopenLogs)}`;
      const elided = cell.outputs.find((output) => output.kind === "elided");
      assert.ok(elided && elided.kind === "elided" && elided.elidedBytes >= lastTail.elidedBytes, `the stored output says what was elided: ${story()}`);
      assert.ok(storedNumbers.at(-1)! >= lastShown, `stored reaches the last tail line shown (line ${lastShown}): ${story()}`);
      // The cell ran on between that tail and the kill (a tail goes out every 250 ms): where the stored tail still
      // covers the last line shown, it holds that line and what followed it verbatim; where the run outgrew the
      // tail's budget first, those lines are among the elided bytes, as they would be without the kill.
      if (storedTailFirst !== undefined && storedTailFirst <= lastShown) {
        const shownEnd = `${shownLines.at(-1)!}\n${shownPartial}`;
        assert.ok(stored.includes(shownEnd), `the last tail line shown (line ${lastShown}) and what followed it (${JSON.stringify(shownPartial.slice(0, 20))}) are stored: ${story()}`);
      }
      assert.ok(stored.length <= 256 * 1024 + 64 * 1024 + 100, `the stored output keeps the budget (${stored.length} characters): ${story()}`);
    } finally {
      await server.stop("SIGKILL");
      await agentGone(floodDir);
      rmSync(floodDir, { recursive: true, force: true });
    }
  });

  it("SIGTERM while a cell streams: the cell is not ended (its kernel stays with the host agent), and everything shown is stored", LIMIT, async () => {
    const server = await LabServer.start(agentEnv(dataDir));
    const { client, notebookId, cellId } = await startRunning(server, "sigterm");
    await waitForLines(client, cellId, 50);
    const disconnected = new Promise<void>((resolve) => client.socket.once("disconnect", () => resolve()));
    await server.stop("SIGTERM");
    await disconnected;

    assert.equal(client.events.findIndex((event) => event.type === "cell-finished" && event.cellId === cellId), -1, "a stop does not end the cell");
    const seen = shownText(client.events, cellId);
    client.close();
    const db = await openDatabase({ dataDir });
    try {
      const runs = new RunRepository(db.prisma);
      const [run] = await runs.list(notebookId);
      assert.equal(run?.status, "running", "the run goes on with the agent, for the next server to take over");
      const [detached] = (await runs.detachedRuns()).filter((candidate) => candidate.notebookId === notebookId);
      assert.ok(detached?.running, "the running execution is there to take over");
      const stored = detached.running.outputs.map((output) => (output.kind === "stream" ? output.text : "")).join("");
      assert.ok(stored.startsWith(seen), "everything shown is stored");
    } finally {
      await db.close();
    }
    // No server comes back: the agent ends the kernel after its lease.
    await agentGone(dataDir);
  });
});
