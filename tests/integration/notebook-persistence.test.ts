/** Notebooks in the database through the socket API: the list, autosave, conflicts, restart recovery. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { NotebookRepository, resolveDatabaseFile } from "../../server/persistence";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { LabServer } from "../helpers/lab-server";
import { SocketHarness, connectClient, type TestClient } from "../helpers/socket-harness";
import { forEachDatabase } from "./persistence-harness";

const LIMIT = { timeout: 120_000 };

// The socket API's notebook operations on each database; the restart below runs a real server process on SQLite.
forEachDatabase((kind) => {
  describe("notebooks in the database", () => {
    let harness: SocketHarness;
    let alice: TestClient;
    let bob: TestClient;
    before(async () => {
      const place = await kind.fresh();
      harness = await SocketHarness.start({ dataDir: place.where.dataDir, databaseUrl: place.where.url });
      alice = await harness.client();
      bob = await harness.client();
    });
    after(async () => {
      alice.close();
      bob.close();
      await harness.close();
    });

    it("creates, lists, renames, duplicates, deletes and restores notebooks, telling open viewers", LIMIT, async () => {
      const created = await alice.sendLab({ op: "create-notebook", title: "  DDP hangs  " });
      assert.ok(created.ok && created.notebook);
      const id = created.notebook.id;
      assert.equal(created.notebook.title, "DDP hangs");
      assert.equal(created.notebook.cellCount, 1);
      await bob.send({ op: "open", notebookId: id });

      const renamed = await alice.sendLab({ op: "rename-notebook", notebookId: id, title: "Why DDP hangs" });
      assert.ok(renamed.ok && renamed.notebook?.title === "Why DDP hangs");
      await bob.waitFor((event) => event.type === "notebook-renamed" && event.title === "Why DDP hangs");

      const copy = await alice.sendLab({ op: "duplicate-notebook", notebookId: id });
      assert.ok(copy.ok && copy.notebook && copy.notebook.id !== id && copy.notebook.title === "Why DDP hangs (copy)");

      assert.ok((await alice.sendLab({ op: "delete-notebook", notebookId: id })).ok);
      await bob.waitFor((event) => event.type === "notebook-deleted");
      const active = await alice.sendLab({ op: "list-notebooks" });
      const deleted = await alice.sendLab({ op: "list-notebooks", state: "deleted" });
      assert.ok(active.ok && deleted.ok);
      assert.ok(!active.notebooks!.some((item) => item.id === id));
      assert.ok(deleted.notebooks!.some((item) => item.id === id && item.deletedAt !== null));

      assert.ok((await alice.sendLab({ op: "restore-notebook", notebookId: id })).ok);
      await bob.waitFor((event) => event.type === "notebook-restored");
      const again = await alice.sendLab({ op: "list-notebooks" });
      assert.ok(again.ok && again.notebooks!.some((item) => item.id === id));
    });

    it("refuses bad titles and unknown notebooks clearly", LIMIT, async () => {
      const empty = await alice.sendLab({ op: "create-notebook", title: "   " });
      assert.equal(empty.ok, false);
      assert.match(empty.ok ? "" : empty.error, /title/);
      const missing = await alice.send({ op: "open", notebookId: "doesnotexist" });
      assert.equal(missing.ok, false);
      assert.match(missing.ok ? "" : missing.error, /not found/);
      const renameMissing = await alice.sendLab({ op: "rename-notebook", notebookId: "doesnotexist", title: "x" });
      assert.equal(renameMissing.ok, false);
    });

    it("saves an edit before acknowledging it", LIMIT, async () => {
      const id = await harness.createNotebook("autosave");
      const opened = await alice.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      assert.deepEqual(await alice.send({ op: "set-source", notebookId: id, cellId, source: "x = 1", baseHash: sourceHash("") }), { ok: true });
      assert.deepEqual(await alice.send({ op: "insert-cell", notebookId: id, index: 1, cell: { id: "second", kind: "markdown", source: "# notes" } }), { ok: true });
      const stored = await new NotebookRepository(harness.lab.db.prisma).load(id);
      assert.deepEqual(stored.cells.map((cell) => [cell.id, cell.kind, cell.source]), [[cellId, "code", "x = 1"], ["second", "markdown", "# notes"]]);
    });

    it("turns an edit on top of text another tab replaced into a conflict, never a silent overwrite", LIMIT, async () => {
      const id = await harness.createNotebook("conflict");
      const opened = await alice.send({ op: "open", notebookId: id });
      await bob.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      const base = sourceHash("");
      assert.deepEqual(await alice.send({ op: "set-source", notebookId: id, cellId, source: "alice()", baseHash: base }), { ok: true });
      const refused = await bob.send({ op: "set-source", notebookId: id, cellId, source: "bob()", baseHash: base });
      assert.equal(refused.ok, false);
      assert.deepEqual(refused.ok ? null : refused.conflict, { cellId, theirSource: "alice()" });
      assert.deepEqual(await bob.send({ op: "set-source", notebookId: id, cellId, source: "bob()", baseHash: base, force: true }), { ok: true });
      await alice.waitFor((event) => event.type === "cell-source" && event.source === "bob()");
      const stored = await new NotebookRepository(harness.lab.db.prisma).load(id);
      assert.equal(stored.cells[0]!.source, "bob()");
    });

    it("refuses to run text typed on top of a source another tab replaced", LIMIT, async () => {
      const id = await harness.createNotebook("run conflict");
      const opened = await alice.send({ op: "open", notebookId: id });
      await bob.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      await alice.send({ op: "set-source", notebookId: id, cellId, source: "print('alice')", baseHash: sourceHash("") });
      // Bob's tab shows its own unsaved text: the run names the hash of what Bob sees, and the server stores Alice's.
      const refused = await bob.send({ op: "execute", notebookId: id, cellIds: [cellId], sourceHashes: { [cellId]: sourceHash("print('bob')") } });
      assert.equal(refused.ok, false);
      assert.deepEqual(refused.ok ? null : refused.conflict, { cellId, theirSource: "print('alice')" });
      const again = await bob.send({ op: "open", notebookId: id });
      assert.ok(again.ok && again.notebook);
      assert.equal(again.notebook.cells[0]!.source, "print('alice')");
      assert.equal(again.notebook.cells[0]!.runState, "idle", "nothing was queued");
    });

    it("streams metrics of a run into the cell's live view and the database", LIMIT, async () => {
      const id = await harness.createNotebook("metrics");
      const opened = await alice.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      const code = "import mgpulab as lab\nfor step in range(20):\n    lab.log(step, loss=1.0 / (step + 1), rank=step % 2, forward_ms=2.5)";
      await alice.run(id, { [cellId]: code });
      await alice.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      const live = [...alice.events].reverse().find((event) => event.type === "cell-metrics" && event.cellId === cellId);
      assert.ok(live && live.type === "cell-metrics");
      assert.equal(live.liveMetrics.points, 20);
      assert.deepEqual(live.liveMetrics.ranks.map((row) => [row.rank, row.step, row.values.loss]), [[0, 18, 1 / 19], [1, 19, 1 / 20]]);
      // Metrics are written in batches behind the run; disposing the runtime drains its write queue.
      await (await harness.lab.hub.get(id))!.dispose();
      const runs = await harness.lab.catalog.repos.runs.list(id);
      const series = await harness.lab.catalog.repos.metrics.series(runs[0]!.id, { name: "loss" });
      assert.deepEqual(series.map((one) => one.step.length).sort(), [10, 10], "one loss series per rank, every point stored");
    });
  });
});

describe("a server stopped in the middle of a run", () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-restart-"));
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps finished outputs and marks the cut-off run interrupted, never running", LIMIT, async () => {
    const server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
    let id = "";
    let cellId = "";
    try {
      const client = await connectClient(server.url);
      const created = await client.sendLab({ op: "create-notebook", title: "restart" });
      assert.ok(created.ok && created.notebook);
      id = created.notebook.id;
      const opened = await client.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      cellId = opened.notebook.cells[0]!.id;
      await client.send({ op: "insert-cell", notebookId: id, index: 1, cell: { id: "slow", kind: "code", source: "" } });
      await client.run(id, { [cellId]: "print('finished output')\n40 + 2" });
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      await client.run(id, { slow: "print('partial', flush=True)\nimport time\ntime.sleep(600)" });
      await client.waitFor((event) => event.type === "cell-stream" && event.cellId === "slow");
      // Give the batched output writer its chance, as a real run would have had, then die hard.
      await waitForStoredOutput(dataDir, id, "slow");
      client.close();
    } finally {
      await server.stop("SIGKILL");
    }

    const restarted = await SocketHarness.start({ dataDir });
    try {
      assert.equal(restarted.lab.interruptedRuns, 1);
      const viewer = await restarted.client();
      const opened = await viewer.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const [done, slow] = opened.notebook.cells;
      assert.deepEqual(done!.outputs, [
        { kind: "stream", name: "stdout", text: "finished output\n" },
        { kind: "result", executionCount: 1, data: { "text/plain": "42" } },
      ]);
      assert.equal(done!.lastRun?.status, "ok");
      assert.equal(slow!.lastRun?.status, "interrupted");
      assert.deepEqual(slow!.outputs, [{ kind: "stream", name: "stdout", text: "partial\n" }]);
      assert.equal(slow!.runState, "idle");
      const runs = await restarted.lab.catalog.repos.runs.list(id);
      assert.ok(runs.every((run) => run.status !== "running"));
      viewer.close();
    } finally {
      await restarted.close({ keepData: true });
    }
  });
});

/** Polls the database file the server writes (another process: no event reaches this one), read-only. */
async function waitForStoredOutput(dataDir: string, notebookId: string, cellId: string): Promise<void> {
  const db = new BetterSqlite3(resolveDatabaseFile({ dataDir }), { readonly: true, fileMustExist: true });
  try {
    const count = db.prepare('SELECT count(*) AS n FROM "CellOutput" WHERE "notebookId" = ? AND "cellId" = ?');
    const deadline = Date.now() + 20_000;
    while ((count.get(notebookId, cellId) as { n: number }).n === 0) {
      if (Date.now() > deadline) throw new Error("the server never stored the running cell's output");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    db.close();
  }
}

describe("notebooks from scenarios", () => {
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

  it("lists the five scenarios of the articles", LIMIT, async () => {
    const listed = await client.sendLab({ op: "list-scenarios" });
    assert.ok(listed.ok && listed.scenarios);
    assert.deepEqual(listed.scenarios.map((scenario) => scenario.id), ["dp-basics", "dp-not-starting", "params-not-updated", "incomplete-results-gil", "hangs"]);
  });

  it("creates a notebook whose experiment cells carry their template and validated values, and whose last cell computes the verdicts", LIMIT, async () => {
    const created = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics", params: { batch_size: 66, devices: 4 } });
    assert.ok(created.ok && created.notebook);
    const stored = await harness.lab.catalog.repos.notebooks.load(created.notebook.id);
    const templated = stored.cells.filter((cell) => cell.template !== null);
    assert.ok(templated.length > 0);
    assert.ok(templated.every((cell) => cell.template!.id.startsWith("dp-basics/") && cell.template!.parameters.batch_size === 66));
    assert.match(stored.cells[0]!.source, /\| `batch_size` \| `66` \|/);
    const last = stored.cells[stored.cells.length - 1]!;
    assert.match(last.source, /mgpulab_scenarios\.run\('dp-basics', \{'batch_size': 66, 'devices': 4/);
  });

  it("refuses out-of-range and hostile parameter values before creating anything", LIMIT, async () => {
    const before = (await harness.lab.catalog.repos.notebooks.list({ state: "active" })).length;
    const tooMany = await client.sendLab({ op: "create-from-scenario", scenarioId: "dp-basics", params: { devices: 999 } });
    assert.equal(tooMany.ok, false);
    assert.match(tooMany.ok ? "" : tooMany.error, /devices/);
    const hostile = await client.sendLab({ op: "create-from-scenario", scenarioId: "hangs", params: { fault: "none'); import os; os.system('id" } });
    assert.equal(hostile.ok, false);
    assert.match(hostile.ok ? "" : hostile.error, /fault/);
    const unknown = await client.sendLab({ op: "create-from-scenario", scenarioId: "no-such-scenario" });
    assert.equal(unknown.ok, false);
    assert.equal((await harness.lab.catalog.repos.notebooks.list({ state: "active" })).length, before);
  });
});
