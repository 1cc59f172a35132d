/**
 * A cell queued behind a running one is stored as queued when it is taken,
 * so it is never silently dropped:
 * - the lab server stops (SIGTERM) or dies (SIGKILL) while the first cell
 *   runs: the next server takes the kernel over and runs the queued cell
 *   after it, once, under the execution it was queued as;
 * - the kernel dies under the first cell: the queued one ends "aborted", and
 *   that ending is stored (its execution, the cell's last run), so a page
 *   opened later shows what the page that watched it showed.
 * Found by the chaos run (`npm run chaos`): a Run of two cells acknowledged
 * just before a server restart lost its second cell without a word, and an
 * "aborted" cell showed its previous run's "ok" once reloaded.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openDatabase, RunRepository } from "../../server/persistence";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, SocketHarness, type TestClient } from "../helpers/socket-harness";
import { shownText, storedText } from "../helpers/cell-text";

const LIMIT = { timeout: 180_000 };
const LINES = 300;
const NUMBERED = `import time\nfor i in range(${LINES}):\n    print(f'line {i}', flush=True)\n    time.sleep(0.01)\nprint('done')`;
const SECOND = "print('second ran')";

/** A notebook with two code cells, the first printing for ~3 s and the second queued behind it in one Run. */
async function runTwo(client: TestClient, title: string): Promise<{ notebookId: string; first: string; second: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const notebookId = created.notebook.id;
  const opened = await client.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook);
  const first = opened.notebook.cells[0]!.id;
  const second = `queued-${first}`;
  assert.deepEqual(await client.send({ op: "insert-cell", notebookId, index: 1, cell: { id: second, kind: "code", source: "" } }), { ok: true });
  assert.deepEqual(await client.run(notebookId, { [first]: NUMBERED, [second]: SECOND }), { ok: true });
  await client.waitFor(() => shownText(client.events, first).split("\n").length > 40);
  assert.ok(client.events.some((event) => event.type === "cell-run-state" && event.cellId === second && event.runState === "queued"), "the second cell is queued");
  return { notebookId, first, second };
}

function finishedOf(events: NotebookEvent[], cellId: string): Extract<NotebookEvent, { type: "cell-finished" }> | undefined {
  return events.find((event): event is Extract<NotebookEvent, { type: "cell-finished" }> => event.type === "cell-finished" && event.cellId === cellId);
}

async function executionsOf(where: { dataDir?: string }, notebookId: string, cellId: string): Promise<Array<{ id: string; status: string; source: string }>> {
  const db = await openDatabase({ ...where, alreadyMigrated: true });
  try {
    const runs = new RunRepository(db.prisma);
    const all = [];
    for (const run of await runs.list(notebookId)) all.push(...(await runs.listExecutions(run.id)));
    return all.filter((execution) => execution.cellId === cellId).map((execution) => ({ id: execution.id, status: execution.status, source: execution.source }));
  } finally {
    await db.close();
  }
}

describe("a cell queued behind a running one", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-queued-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`runs on the next server when its server gets ${signal}`, LIMIT, async () => {
      const dataDir = path.join(dir, signal);
      const env = { MGPULAB_DATA_DIR: dataDir, MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents") };
      const first = await LabServer.start(env);
      const client = await connectClient(first.url);
      const { notebookId, first: firstCell, second } = await runTwo(client, `queued ${signal}`);
      await first.stop(signal);
      client.close();
      assert.equal(finishedOf(client.events, second), undefined, "the server stopped before the second cell ran");

      const next = await LabServer.start(env);
      try {
        const viewer = await connectClient(next.url);
        const opened = await viewer.send({ op: "open", notebookId });
        assert.ok(opened.ok && opened.notebook);
        const ended = opened.notebook.cells.find((cell) => cell.id === second)?.lastRun !== null;
        const finished = ended ? null : await Promise.race([viewer.waitFor((event) => event.type === "cell-finished" && event.cellId === second), new Promise<null>((resolve) => setTimeout(() => resolve(null), 90_000))]);
        assert.ok(ended || finished, "the second cell ended on the next server (90 s)");
        const reopened = await viewer.send({ op: "open", notebookId });
        assert.ok(reopened.ok && reopened.notebook);
        viewer.close();
        assert.equal(storedText(reopened.notebook, second), "second ran\n");
        assert.equal(reopened.notebook.cells.find((cell) => cell.id === second)?.lastRun?.status, "ok");
        assert.match(storedText(reopened.notebook, firstCell), /line 299\ndone\n$/);
      } finally {
        await next.stop("SIGTERM");
      }
      const executions = await executionsOf({ dataDir }, notebookId, second);
      assert.deepEqual(executions.map(({ status, source }) => ({ status, source })), [{ status: "ok", source: SECOND }], "one execution, the one it was queued as");
    });
  }

  describe("when its kernel dies", () => {
    let harness: SocketHarness;
    before(async () => {
      harness = await SocketHarness.start({ dataDir: path.join(dir, "harness") });
    });
    after(async () => {
      await harness?.close({ keepData: true });
    });

    it("ends aborted, and that ending is stored as the page showed it", LIMIT, async () => {
      const client = await harness.client();
      try {
        const { notebookId, second } = await runTwo(client, "queued, kernel killed");
        const status = client.events.findLast((event) => event.type === "kernel-status" && event.status.state === "busy");
        assert.ok(status?.type === "kernel-status" && "info" in status.status);
        process.kill(status.status.info.pid, "SIGKILL");
        const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === second);
        assert.ok(finished.type === "cell-finished" && finished.status === "aborted", JSON.stringify(finished));
        const shownRunState = client.events.findLast((event) => event.type === "cell-run-state" && event.cellId === second);
        assert.ok(shownRunState?.type === "cell-run-state" && shownRunState.runState === "idle");

        await (await harness.lab.hub.get(notebookId))!.dispose();
        const executions = await executionsOf({ dataDir: path.join(dir, "harness") }, notebookId, second);
        assert.deepEqual(executions.map(({ status, source }) => ({ status, source })), [{ status: "aborted", source: SECOND }]);
        assert.equal(shownRunState.executionId, executions[0]!.id, "the page names the aborted execution");
        const fresh = await harness.client();
        const reopened = await fresh.send({ op: "open", notebookId });
        fresh.close();
        assert.ok(reopened.ok && reopened.notebook);
        const cell = reopened.notebook.cells.find((each) => each.id === second);
        assert.deepEqual({ lastRun: cell?.lastRun?.status, executionId: cell?.executionId }, { lastRun: "aborted", executionId: executions[0]!.id }, "a page opened later shows the same ending");
      } finally {
        client.close();
      }
    });
  });
});
