/** Notebooks on SQLite and PostgreSQL: CRUD, soft delete, cell edits against an in-memory reference, version conflicts. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { applyServerEvent, newCell } from "../../server/core/notebook/notebook-state";
import { deleteCell as refDelete, insertCell as refInsert, moveCell as refMove } from "../../server/notebook/notebook-ops";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { InvalidDataError, NotFoundError, VersionConflictError } from "../../server/persistence/errors";
import { toNotebookDocument } from "../../server/persistence/notebook-repository";
import type { CellInput } from "../../server/persistence/types";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

// Each half of forEachDatabase sets it for its own tests (the halves run one after the other).
let t: TestDatabase;

const code = (id: string, source = `print(${JSON.stringify(id)})`): CellInput => ({ id, kind: "code", source });
const ids = (cells: Array<{ id: string }>) => cells.map((cell) => cell.id);

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("NotebookRepository", () => {
    it("creates, lists, renames, duplicates, soft-deletes and restores", async () => {
      const created = await t.notebooks.create({
        ownerId: t.ownerId,
        title: "  DDP basics ",
        cells: [
          { ...code("a"), outputs: [{ kind: "stream", name: "stdout", text: "hi\n" }], executionCount: 3, lastRun: { status: "ok", durationMs: 12 } },
          { id: "b", kind: "markdown", source: "# Title", template: { id: "ddp.basics", parameters: { devices: 4, lr: 0.1, mode: "gloo" }, detached: false, fields: [], question: null } },
        ],
      });
      assert.equal(created.title, "DDP basics");
      assert.equal(created.version, 0);
      assert.deepEqual(ids(created.cells), ["a", "b"]);
      assert.deepEqual(created.cells[0]!.outputs, [{ kind: "stream", name: "stdout", text: "hi\n" }]);
      assert.equal(created.cells[0]!.executionCount, 3);
      assert.deepEqual(created.cells[0]!.lastRun, { status: "ok", durationMs: 12 });
      assert.deepEqual(created.cells[1]!.template, { id: "ddp.basics", parameters: { devices: 4, lr: 0.1, mode: "gloo" }, detached: false, fields: [], question: null });
      assert.deepEqual(toNotebookDocument(created).kernel, { state: "not-started" });

      const renamed = await t.notebooks.rename(created.id, "DDP, measured", 0);
      assert.equal(renamed.version, 1);
      await assert.rejects(t.notebooks.rename(created.id, "stale", 0), VersionConflictError);
      await assert.rejects(t.notebooks.rename(created.id, "   "), InvalidDataError);

      const copy = await t.notebooks.duplicate(created.id);
      assert.equal(copy.title, "DDP, measured (copy)");
      assert.notEqual(copy.id, created.id);
      assert.deepEqual(copy.cells, (await t.notebooks.load(created.id)).cells);

      const listed = await t.notebooks.list({ ownerId: t.ownerId });
      assert.ok(listed.some((summary) => summary.id === created.id && summary.cellCount === 2));

      await t.notebooks.softDelete(created.id);
      await t.notebooks.softDelete(created.id); // idempotent
      assert.ok(!(await t.notebooks.list()).some((summary) => summary.id === created.id));
      assert.ok((await t.notebooks.list({ state: "deleted" })).some((summary) => summary.id === created.id));
      await assert.rejects(t.notebooks.load(created.id), NotFoundError);
      assert.equal((await t.notebooks.load(created.id, { includeDeleted: true })).cells.length, 2);
      await assert.rejects(t.notebooks.saveCells(created.id, 1, []), NotFoundError, "a deleted notebook takes no edits");

      await t.notebooks.restore(created.id);
      assert.deepEqual(ids((await t.notebooks.load(created.id)).cells), ["a", "b"]);
      await assert.rejects(t.notebooks.restore("no-such-notebook"), NotFoundError);
    });

    it("purges notebooks deleted before a date with everything they own", async () => {
      const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "gone", cells: [code("x")] });
      const run = await t.runs.start({ notebookId: notebook.id, host: "local", deviceMode: "1× cpu" });
      await t.metrics.append(run.id, [{ rank: 0, step: 0, values: { loss: 1 } }]);
      await t.notebooks.softDelete(notebook.id);
      assert.equal(await t.notebooks.purgeDeleted(new Date(Date.now() + 1000)), 1);
      await assert.rejects(t.notebooks.load(notebook.id, { includeDeleted: true }), NotFoundError);
      assert.equal(await t.db.prisma.metricPoint.count({ where: { series: { runId: run.id } } }), 0, "cascade reached the metric points");
    });

    it("insert, move and delete keep the same order as the in-memory notebook ops (300 random edits)", async () => {
      const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "order", cells: [] });
      let reference: NotebookDocument = { id: stored.id, title: "order", deleted: false, cells: [], kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
      let version = stored.version;
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      for (let step = 0; step < 300; step++) {
        const count = reference.cells.length;
        const choice = count < 3 ? 0 : random(10);
        if (choice < 5) {
          // Inserting at the same spot over and over grows keys; the repository must renumber.
          const index = step % 4 === 0 ? 1 : random(count + 2);
          reference = applyServerEvent(reference, refInsert(reference, index, newCell(`c${step}`)));
          ({ version } = await t.notebooks.insertCell(stored.id, version, index, code(`c${step}`, "")));
        } else if (choice < 8) {
          const cell = reference.cells[random(count)]!;
          const toIndex = random(count + 1);
          reference = applyServerEvent(reference, refMove(reference, cell.id, toIndex));
          ({ version } = await t.notebooks.moveCell(stored.id, version, cell.id, toIndex));
        } else {
          const cell = reference.cells[random(count)]!;
          reference = applyServerEvent(reference, refDelete(reference, cell.id));
          ({ version } = await t.notebooks.deleteCell(stored.id, version, cell.id));
        }
      }
      const loaded = await t.notebooks.load(stored.id);
      assert.deepEqual(ids(loaded.cells), ids(reference.cells));
      assert.equal(loaded.version, 300);
      const longest = Math.max(...(await t.db.prisma.cell.findMany({ where: { notebookId: stored.id }, select: { position: true } })).map((row) => row.position.length));
      assert.ok(longest <= 24, `keys stay short (longest ${longest})`);
    });

    it("renumbers when inserts at one spot make keys long, keeping the order", async () => {
      const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "hot spot", cells: [code("first"), code("last")] });
      let version = stored.version;
      const expected = ["first", "last"];
      for (let i = 0; i < 200; i++) {
        ({ version } = await t.notebooks.insertCell(stored.id, version, 1, code(`h${i}`, "")));
        expected.splice(1, 0, `h${i}`);
      }
      assert.deepEqual(ids((await t.notebooks.load(stored.id)).cells), expected);
      const keys = (await t.db.prisma.cell.findMany({ where: { notebookId: stored.id }, select: { position: true } })).map((row) => row.position);
      assert.ok(Math.max(...keys.map((key) => key.length)) <= 24);
    });

    it("saveCells rewrites only what changed and keeps positions of cells that did not move", async () => {
      const cells = Array.from({ length: 50 }, (_, i) => code(`k${i}`));
      const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "save", cells });
      const before = new Map((await t.db.prisma.cell.findMany({ where: { notebookId: stored.id }, select: { id: true, position: true } })).map((row) => [row.id, row.position]));

      const next = [code("new-first"), ...cells.slice(0, 10), { ...cells[10]!, source: "changed" }, ...cells.slice(12), cells[11]!];
      const { version } = await t.notebooks.saveCells(stored.id, 0, next);
      assert.equal(version, 1);
      const loaded = await t.notebooks.load(stored.id);
      assert.deepEqual(ids(loaded.cells), ids(next));
      assert.equal(loaded.cells.find((cell) => cell.id === "k10")!.source, "changed");
      const after_ = new Map((await t.db.prisma.cell.findMany({ where: { notebookId: stored.id }, select: { id: true, position: true } })).map((row) => [row.id, row.position]));
      const moved = [...before].filter(([id, position]) => after_.get(id) !== position).map(([id]) => id);
      assert.deepEqual(moved, ["k11"], "only the moved cell got a new key");

      // Fields left out keep their stored values; given ones replace them.
      await t.notebooks.setCellOutputs(stored.id, "k0", { outputs: [{ kind: "stream", name: "stdout", text: "kept" }], executionCount: 1, lastRun: { status: "ok", durationMs: 1 } });
      await t.notebooks.saveCells(stored.id, 1, [code("k0", "edited")]);
      const [k0] = (await t.notebooks.load(stored.id)).cells;
      assert.deepEqual(k0, {
        id: "k0",
        kind: "code",
        source: "edited",
        outputs: [{ kind: "stream", name: "stdout", text: "kept" }],
        executionCount: 1,
        runState: "idle",
        liveMetrics: null,
        lastRun: { status: "ok", durationMs: 1 },
        executionId: null,
        template: null,
      });
    });

    it("a stale version is refused with the current version, and writes nothing", async () => {
      const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "conflict", cells: [code("a"), code("b")] });
      await t.notebooks.updateCellSource(stored.id, 0, "a", "x = 1");
      const attempts: Array<() => Promise<unknown>> = [
        () => t.notebooks.saveCells(stored.id, 0, [code("z")]),
        () => t.notebooks.insertCell(stored.id, 0, 0, code("z")),
        () => t.notebooks.moveCell(stored.id, 0, "b", 0),
        () => t.notebooks.deleteCell(stored.id, 0, "b"),
        () => t.notebooks.updateCellSource(stored.id, 0, "a", "lost"),
        () => t.notebooks.rename(stored.id, "lost", 0),
      ];
      for (const attempt of attempts) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof VersionConflictError);
          assert.equal(error.code, "version-conflict");
          assert.equal(error.expectedVersion, 0);
          assert.equal(error.currentVersion, 1);
          return true;
        });
      }
      const loaded = await t.notebooks.load(stored.id);
      assert.equal(loaded.version, 1);
      assert.equal(loaded.title, "conflict");
      assert.deepEqual(loaded.cells.map((cell) => [cell.id, cell.source]), [["a", "x = 1"], ["b", 'print("b")']]);
    });

    it("two writers from the same version: exactly one wins", async () => {
      const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "race", cells: [code("a")] });
      const results = await Promise.allSettled([
        t.notebooks.updateCellSource(stored.id, 0, "a", "first"),
        t.notebooks.updateCellSource(stored.id, 0, "a", "second"),
      ]);
      assert.equal(results.filter((result) => result.status === "fulfilled").length, 1);
      assert.ok(results.some((result) => result.status === "rejected" && result.reason instanceof VersionConflictError));
    });

    it("rejects bad input with a reason and writes nothing", async () => {
      const before_ = await t.counts();
      const bad: Array<[string, () => Promise<unknown>]> = [
        ["duplicate ids", () => t.notebooks.create({ ownerId: t.ownerId, title: "x", cells: [code("a"), code("a")] })],
        ["bad id", () => t.notebooks.create({ ownerId: t.ownerId, title: "x", cells: [code("a b")] })],
        ["bad kind", () => t.notebooks.create({ ownerId: t.ownerId, title: "x", cells: [{ id: "a", kind: "raw" as "code", source: "" }] })],
        ["huge source", () => t.notebooks.create({ ownerId: t.ownerId, title: "x", cells: [code("a", "x".repeat(1_000_001))] })],
        ["bad output", () => t.notebooks.create({ ownerId: t.ownerId, title: "x", cells: [{ ...code("a"), outputs: [{ kind: "nope" } as never] }] })],
        ["unknown owner", () => t.notebooks.create({ ownerId: "nobody", title: "x", cells: [code("a")] })],
        ["long title", () => t.notebooks.create({ ownerId: t.ownerId, title: "x".repeat(201) })],
      ];
      for (const [what, attempt] of bad) {
        await assert.rejects(attempt(), (error: unknown) => error instanceof InvalidDataError || error instanceof NotFoundError, what);
      }
      assert.deepEqual(await t.counts(), before_);
    });
  });
});
