/**
 * A Run taken while its notebook's kernel is still starting is stored at
 * once, as queued, under a run stored for that kernel, and never left
 * unstored whatever becomes of the kernel:
 * - the kernel never comes up: the run ends as died, saying why, and the
 *   cell's execution ends as no-kernel;
 * - it comes up: the run is told what the kernel is (device mode, the host
 *   agent's id a takeover needs), and the queued cells run under it;
 * - the server dies first: the next one ends the run and its queued cell.
 * Found by the chaos run at a load of 41 (kernels took minutes to import
 * torch): a cell queued before its kernel had a run was kept only in memory,
 * and a workshop that ended first left no record of a Run it had taken.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KernelInfo } from "../../server/core/protocol/notebook-model";
import { DatabaseNotebookPersistence, KERNEL_STARTING } from "../../server/notebook/notebook-persistence";
import type { RunKernel } from "../../server/notebook/persistence-contract";
import { PredictionRepository, RunRepository } from "../../server/persistence";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

let t: TestDatabase;

const INFO: KernelInfo = { pid: 4242, hostname: "box", python: "3.12.3", executable: "/usr/bin/python3", torch: "2.11.0", deviceMode: "1× CUDA (H200)", host: { id: "local", label: "this machine" }, gpus: ["GPU-1"] };
const STARTING: RunKernel = { info: null, host: "local", agent: null };
const UP: RunKernel & { info: KernelInfo } = { info: INFO, host: "local", agent: { hostId: "local", agentKernelId: "k-77" } };

async function notebookWithPersistence(cells: string[]) {
  const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "before its kernel", cells: cells.map((id) => ({ id, kind: "code", source: `print('${id}')` })) });
  const reports: string[] = [];
  const repos = { notebooks: t.notebooks, runs: t.runs, metrics: t.metrics, predictions: new PredictionRepository(t.db.prisma) };
  const persistence = new DatabaseNotebookPersistence(notebook.id, notebook.version, repos, t.ownerId, (message) => reports.push(message));
  return { notebookId: notebook.id, persistence, reports };
}

const queued = (cellId: string) => ({ id: `exec-${cellId}-${Math.random().toString(36).slice(2)}`, cellId, source: `print('${cellId}')`, template: null });

async function executionsOf(notebookId: string) {
  const runs = await t.runs.list(notebookId);
  const executions = [];
  for (const run of runs) executions.push(...(await t.runs.listExecutions(run.id)));
  return { runs, executions };
}

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("a Run taken while the kernel starts", () => {
    it("is stored at once, and ends with the run, saying why, when the kernel never comes up", async () => {
      const { notebookId, persistence, reports } = await notebookWithPersistence(["a"]);
      const execution = queued("a");
      persistence.executionQueued(execution, { kernel: STARTING });
      await persistence.commit();
      const stored = await executionsOf(notebookId);
      assert.equal(stored.runs.length, 1, "the run is stored before its kernel is up");
      assert.deepEqual(
        stored.runs.map((run) => ({ status: run.status, deviceMode: run.deviceMode, host: run.host })),
        [{ status: "running", deviceMode: KERNEL_STARTING, host: "local" }],
      );
      assert.deepEqual(stored.executions.map((each) => ({ id: each.id, status: each.status })), [{ id: execution.id, status: "queued" }]);

      // What the runtime does when the start fails: the kernel is dead (the run ends), then its waiting cells end as no-kernel.
      persistence.kernelEnded("died", "the kernel did not start: python3 exited with status 1");
      assert.equal(persistence.queuedExecutionEnded(execution.id, { status: "no-kernel", executionCount: null, outputs: [] }), true, "its ending is stored");
      await persistence.flush();
      const ended = await executionsOf(notebookId);
      assert.deepEqual(ended.runs.map((run) => ({ status: run.status, exitReason: run.exitReason })), [{ status: "died", exitReason: "the kernel did not start: python3 exited with status 1" }]);
      assert.deepEqual(ended.executions.map((each) => ({ id: each.id, status: each.status, durationMs: each.durationMs })), [{ id: execution.id, status: "no-kernel", durationMs: 0 }]);
      const cell = (await t.notebooks.load(notebookId)).cells[0]!;
      assert.deepEqual(cell.lastRun, { status: "no-kernel", durationMs: 0 });
      assert.deepEqual(reports, []);
    });

    it("is run under that run once the kernel is up, which then says what the kernel is", async () => {
      const { notebookId, persistence } = await notebookWithPersistence(["a", "b"]);
      const first = queued("a");
      const second = queued("b");
      persistence.executionQueued(first, { kernel: STARTING });
      persistence.executionQueued(second, { kernel: STARTING });
      await persistence.commit();
      const [run] = (await executionsOf(notebookId)).runs;
      assert.equal((await t.runs.detachedRuns(notebookId)).length, 0, "no takeover of a kernel nobody has named yet");

      const record = persistence.executionStarted(first, UP);
      record.output({ kind: "stream", name: "stdout", text: "a\n" });
      await persistence.commit();
      const after = await executionsOf(notebookId);
      assert.deepEqual(after.runs.map((each) => ({ id: each.id, deviceMode: each.deviceMode, status: each.status })), [{ id: run!.id, deviceMode: INFO.deviceMode, status: "running" }], "one run, identified");
      assert.deepEqual(
        after.executions.map((each) => ({ id: each.id, status: each.status })),
        [
          { id: first.id, status: "running" },
          { id: second.id, status: "queued" },
        ],
        "each cell once",
      );
      // A server that stops now leaves the kernel to the next one, with the cell queued behind the running one.
      const [detached] = await t.runs.detachedRuns(notebookId);
      assert.equal(detached?.agentKernelId, "k-77");
      assert.deepEqual(detached?.kernelInfo, INFO);
      assert.deepEqual(detached?.running?.id, first.id);
      assert.deepEqual(detached?.queued.map((each) => each.id), [second.id]);

      record.finished({ status: "ok", durationMs: 12, executionCount: 1, outputs: [{ kind: "stream", name: "stdout", text: "a\n" }] });
      persistence.kernelEnded("finished", null);
      await persistence.flush();
    });

    it("is ended by the next server when this one dies before the kernel is up", async () => {
      const { notebookId, persistence } = await notebookWithPersistence(["a"]);
      const execution = queued("a");
      persistence.executionQueued(execution, { kernel: STARTING });
      await persistence.commit();
      // The next server: runs on a host agent are taken over; this one never named its kernel, so it is ended.
      const next = new RunRepository(t.db.prisma);
      const ended = await next.interruptRunningRuns("lab server restarted", { keepAgentRuns: true, notebookId });
      assert.deepEqual(ended.map((run) => run.status), ["interrupted"]);
      const stored = await executionsOf(notebookId);
      assert.deepEqual(stored.executions.map((each) => ({ id: each.id, status: each.status })), [{ id: execution.id, status: "aborted" }]);
    });
  });
});
