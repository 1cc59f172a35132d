/** Runs, executions and the output log, on SQLite and PostgreSQL: replay after any seq, and recovery after a server restart. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { InvalidDataError, NotFoundError } from "../../server/persistence/errors";
import { sqlOf } from "../../server/persistence/database";
import { foldOutputs, RunRepository, SERVER_RESTARTED } from "../../server/persistence/run-repository";
import type { RunWrite } from "../../server/persistence/run-writes";
import type { Sql } from "../../server/persistence/sql";
import { WriteQueue } from "../../server/notebook/write-queue";
import { isDatabaseUnreachable } from "../../server/persistence/errors";
import type { SequencedOutput } from "../../server/persistence/types";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

// Each half of forEachDatabase sets it for its own tests (the halves run one after the other).
let t: TestDatabase;

const out = (text: string, name: "stdout" | "stderr" = "stdout"): CellOutput => ({ kind: "stream", name, text });

async function notebookWithRun(cells = ["a", "b"]) {
  const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "runs", cells: cells.map((id) => ({ id, kind: "code", source: `# ${id}` })) });
  const run = await t.runs.start({ notebookId: notebook.id, userId: t.ownerId, host: "local", deviceMode: "2× cpu, emulated DataParallel" });
  return { notebook, run };
}

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("RunRepository", () => {
    it("records a run from start to finish and stores what the cell shows", async () => {
      const { notebook, run } = await notebookWithRun();
      assert.equal(run.status, "running");
      const [execution] = await t.runs.queueExecutions(run.id, [{ cellId: "a", source: "print(1)" }]);
      await t.runs.startExecution(execution!, { executionCount: 1 });
      const appended = await t.runs.appendOutputs(execution!, [out("1\n"), { kind: "result", executionCount: 1, data: { "text/plain": "1" } }]);
      assert.deepEqual(appended.map((record) => record.seq), [1, 2]);
      await t.runs.finishExecution(execution!, { status: "ok", durationMs: 5, outputs: foldOutputs(await t.runs.executionOutputs(execution!)) });
      const cell = (await t.notebooks.load(notebook.id)).cells[0]!;
      assert.deepEqual(cell.outputs, [out("1\n"), { kind: "result", executionCount: 1, data: { "text/plain": "1" } }]);
      assert.equal(cell.executionCount, 1);
      assert.deepEqual(cell.lastRun, { status: "ok", durationMs: 5 });
      assert.equal((await t.notebooks.load(notebook.id)).version, 0, "outputs are not edits");

      const finished = await t.runs.finish(run.id, { status: "finished", exitReason: "shutdown" });
      assert.equal(finished.status, "finished");
      assert.ok(finished.endedAt);
      assert.equal((await t.runs.finish(run.id, { status: "died" })).status, "finished", "an ended run stays as it ended");
      await assert.rejects(t.runs.queueExecutions(run.id, [{ cellId: "a", source: "" }]), InvalidDataError);
      const [summary] = await t.runs.listExecutions(run.id);
      assert.equal(summary!.status, "ok");
      assert.equal(summary!.durationMs, 5);
    });

    it("replays exactly what a viewer missed: every record once, none lost, across executions, runs and metrics", async () => {
      const { notebook, run } = await notebookWithRun(["a", "b", "c"]);
      const written: SequencedOutput[] = [];
      let runId = run.id;
      for (let round = 0; round < 6; round++) {
        if (round === 3) {
          await t.runs.finish(runId, { status: "died", exitReason: "SIGKILL" });
          runId = (await t.runs.start({ notebookId: notebook.id, host: "local", deviceMode: "1× cpu" })).id;
        }
        const executions = await t.runs.queueExecutions(runId, [{ cellId: "a", source: "" }, { cellId: "b", source: "" }, { cellId: "c", source: "" }]);
        // Writers interleave: outputs of three executions and metric batches share the notebook's sequence.
        await Promise.all([
          ...executions.map(async (executionId, i) => {
            for (let k = 0; k < 5; k++) written.push(...(await t.runs.appendOutputs(executionId, [out(`r${round} e${i} k${k}\n`), out(`err${k}`, "stderr")])));
          }),
          t.metrics.append(runId, [{ rank: 0, step: round, values: { loss: 1 / (round + 1) } }]),
        ]);
      }
      const seqs = written.map((record) => record.seq).sort((a, b) => a - b);
      assert.equal(new Set(seqs).size, seqs.length, "no seq given twice");

      // A viewer that saw everything up to each possible cursor, paging 7 at a time.
      const lastSeq = await t.runs.lastSeq(notebook.id);
      assert.equal(lastSeq, seqs.length + 6, "outputs and the 6 metric messages share one sequence");
      for (const cursor of [0, 1, 17, seqs[seqs.length - 1]! - 1, lastSeq]) {
        const received: SequencedOutput[] = [];
        let at = cursor;
        for (;;) {
          const page = await t.runs.outputsSince({ notebookId: notebook.id }, at, 7);
          received.push(...page);
          if (page.length < 7) break;
          at = page[page.length - 1]!.seq;
        }
        const expected = written.filter((record) => record.seq > cursor).sort((a, b) => a.seq - b.seq);
        assert.deepEqual(received, expected, `replay after ${cursor}`);
      }
      const byRun = await t.runs.outputsSince({ runId }, 0);
      assert.deepEqual(byRun, written.filter((record) => record.runId === runId).sort((a, b) => a.seq - b.seq));
    });

    it("on server start, marks running runs interrupted and keeps what their cells printed", async () => {
      const { notebook, run } = await notebookWithRun(["a", "b", "c"]);
      const [done, running, queued] = await t.runs.queueExecutions(run.id, [{ cellId: "a", source: "" }, { cellId: "b", source: "" }, { cellId: "c", source: "" }]);
      await t.runs.startExecution(done!, { executionCount: 1 });
      await t.runs.finishExecution(done!, { status: "ok", outputs: [out("done\n")] });
      await t.runs.startExecution(running!, { executionCount: 2 });
      await t.runs.appendOutputs(running!, [out("step 1\n"), out("step 2\n"), out("warn", "stderr"), out("step 3\n")]);
      const other = await notebookWithRun(["z"]);
      await t.runs.finish(other.run.id, { status: "finished" });

      // The server dies here; a new process opens the same file.
      t = await t.reopen();
      const interrupted = await t.runs.interruptRunningRuns();
      assert.ok(interrupted.some((entry) => entry.id === run.id));
      assert.ok(!interrupted.some((entry) => entry.id === other.run.id), "an ended run is not touched");
      const after_ = await t.runs.get(run.id);
      assert.equal(after_.status, "interrupted");
      assert.equal(after_.exitReason, SERVER_RESTARTED);
      assert.ok(after_.endedAt);
      const statuses = Object.fromEntries((await t.runs.listExecutions(run.id)).map((execution) => [execution.id, execution.status]));
      assert.deepEqual(statuses, { [done!]: "ok", [running!]: "interrupted", [queued!]: "aborted" });
      const cells = (await t.notebooks.load(notebook.id)).cells;
      assert.deepEqual(cells[0]!.outputs, [out("done\n")]);
      assert.deepEqual(cells[1]!.outputs, [out("step 1\nstep 2\n"), out("warn", "stderr"), out("step 3\n")]);
      assert.equal(cells[1]!.executionCount, 2);
      assert.equal(cells[1]!.lastRun?.status, "interrupted");
      assert.deepEqual(await t.runs.interruptRunningRuns(), [], "nothing left running");
    });

    it("a group commit whose COMMIT went through but whose answer was lost is stored once when the queue tries it again", async () => {
      // The fault as a PostgreSQL restart makes it: the transaction commits, then the connection drops
      // before its answer arrives, so the lab cannot tell; the write queue tries the commit again.
      const real = sqlOf(t.db.prisma);
      let loseAnswers = 0;
      const lossy: Sql = {
        provider: real.provider,
        time: (date) => real.time(date),
        all: (sql, params) => real.all(sql, params),
        run: (sql, params) => real.run(sql, params),
        close: () => real.close(),
        transaction: async (body) => {
          const result = await real.transaction(body);
          if (loseAnswers > 0) {
            loseAnswers -= 1;
            throw new Error("Connection terminated unexpectedly");
          }
          return result;
        },
      };
      const runs = new RunRepository(t.db.prisma, lossy);
      const queue = new WriteQueue(() => undefined, { when: isDatabaseUnreachable, limitMs: 30_000 });
      const { notebook, run } = await notebookWithRun(["a"]);
      const [execution] = await t.runs.queueExecutions(run.id, [{ cellId: "a", source: "print('x')" }]);
      await t.runs.startExecution(execution!, { executionCount: 1 });
      const progress = (text: string) => ({ kind: "execution-progress" as const, notebookId: notebook.id, runId: run.id, executionId: execution!, cellId: "a", outputs: [out(text)] });

      // A whole group commit, then (a bad write in the batch) one write at a time with the second one's answer lost.
      loseAnswers = 1;
      await queue.run("outputs", (attempt) => runs.write([progress("line 0\n"), progress("line 1\n")], { notebookId: notebook.id, commitId: "c-1", retried: attempt > 0 }));
      const missing = { kind: "execution-progress" as const, notebookId: notebook.id, runId: run.id, executionId: "no-such-execution", cellId: "a", outputs: [out("lost\n")] };
      let commits = 0;
      const countingLossy: Sql = { ...lossy, transaction: async (body) => {
        commits += 1;
        const result = await real.transaction(body);
        if (commits === 3) throw new Error("Connection terminated unexpectedly"); // batch, write 0, write 1 (answer lost)
        return result;
      } };
      const stepwise = new RunRepository(t.db.prisma, countingLossy);
      await queue.run("outputs", (attempt) => stepwise.write([progress("line 2\n"), progress("line 3\n"), missing, progress("line 4\n")], { notebookId: notebook.id, commitId: "c-2", retried: attempt > 0 })).catch((error: unknown) => {
        assert.match(String(error), /1 of 4 writes failed: execution-progress/, "only the bad write fails");
      });
      const stored = (await t.runs.executionOutputs(execution!)).map((output) => (output.kind === "stream" ? output.text : "")).join("");
      assert.equal(stored, "line 0\nline 1\nline 2\nline 3\nline 4\n", "every line once, in order");
    });

    it("a cell's whole life in one group commit is stored as its writes one commit each store it", async () => {
      // The group commit leaves out what a later write of its batch rewrites (run-write-compaction.ts): the rows must not differ.
      const { notebook, run } = await notebookWithRun(["a", "b"]);
      const queuedAt = new Date("2026-11-27T10:00:00.000Z");
      const life = (executionId: string, cellId: string, agentSeq: number): RunWrite[] => [
        { kind: "execution-queued", runId: run.id, executionId, cellId, source: "1+1", template: null, at: queuedAt },
        { kind: "execution-started", notebookId: notebook.id, runId: run.id, executionId, cellId, source: "1+1", template: null, at: new Date("2026-11-27T10:00:00.005Z"), queued: true },
        { kind: "execution-progress", notebookId: notebook.id, runId: run.id, executionId, cellId, outputs: [{ kind: "result", executionCount: 1, data: { "text/plain": "2" } }], heardAt: new Date("2026-11-27T10:00:00.006Z") },
        { kind: "read-position", runId: run.id, agentSeq: agentSeq - 1 },
        { kind: "execution-finished", notebookId: notebook.id, executionId, cellId, status: "ok", durationMs: 2, executionCount: 1, outputs: [{ kind: "result", executionCount: 1, data: { "text/plain": "2" } }], at: new Date("2026-11-27T10:00:00.007Z") },
        { kind: "read-position", runId: run.id, agentSeq },
      ];
      await t.runs.write(life("whole", "a", 10), { notebookId: notebook.id, commitId: "whole", retried: false });
      for (const [index, write] of life("apart", "b", 20).entries()) await t.runs.write([write], { notebookId: notebook.id, commitId: `apart-${index}`, retried: false });

      const executions = new Map((await t.runs.listExecutions(run.id)).map((execution) => [execution.id, execution]));
      const { id: _whole, cellId: _a, ...whole } = executions.get("whole")!;
      const { id: _apart, cellId: _b, ...apart } = executions.get("apart")!;
      assert.deepEqual(whole, apart);
      assert.deepEqual(whole.queuedAt, queuedAt, "queued when it was queued, not when it started");
      const [cellA, cellB] = (await t.notebooks.load(notebook.id)).cells;
      assert.deepEqual([cellA!.outputs, cellA!.executionCount, cellA!.lastRun], [cellB!.outputs, cellB!.executionCount, cellB!.lastRun]);
      const logged = async (executionId: string) => (await t.runs.executionOutputs(executionId)).map((output) => JSON.stringify(output));
      assert.deepEqual(await logged("whole"), await logged("apart"));
      const pointers = await t.db.prisma.cell.findMany({ where: { notebookId: notebook.id }, select: { id: true, lastExecutionId: true }, orderBy: { id: "asc" } });
      assert.deepEqual(pointers, [{ id: "a", lastExecutionId: "whole" }, { id: "b", lastExecutionId: "apart" }], "each cell points at its execution");
      assert.equal((await t.db.prisma.kernelRun.findUniqueOrThrow({ where: { id: run.id }, select: { agentSeq: true } })).agentSeq, 20);
    });

    it("refuses invalid outputs and unknown ids without writing", async () => {
      const { run } = await notebookWithRun();
      const [execution] = await t.runs.queueExecutions(run.id, [{ cellId: "a", source: "" }]);
      const before_ = await t.counts();
      await assert.rejects(t.runs.appendOutputs(execution!, [{ kind: "stream", name: "stdin", text: "" } as never]), InvalidDataError);
      await assert.rejects(t.runs.appendOutputs("nope", [out("x")]), NotFoundError);
      await assert.rejects(t.runs.finishExecution("nope", { status: "ok" }), NotFoundError);
      await assert.rejects(t.runs.get("nope"), NotFoundError);
      assert.deepEqual(await t.counts(), before_);
    });

    it("foldOutputs merges neighbouring chunks of one stream only", () => {
      assert.deepEqual(foldOutputs([out("a"), out("b"), out("c", "stderr"), { kind: "elided", elidedBytes: 3 }, out("d"), out("e")]), [
        out("ab"),
        out("c", "stderr"),
        { kind: "elided", elidedBytes: 3 },
        out("de"),
      ]);
    });
  });
});
