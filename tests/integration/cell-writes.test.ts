/**
 * How an edit writes cells inside its transaction (server/persistence/cell-writes.ts),
 * on SQLite and PostgreSQL: the version bump refuses a stale or deleted
 * notebook and writes nothing, inserts beyond one statement's chunk keep
 * their order, and renumbering gives short keys in the same order.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { bumpVersion, CHUNK, insertCells, positions, renumber } from "../../server/persistence/cell-writes";
import { NotFoundError, VersionConflictError } from "../../server/persistence/errors";
import { keysBetween } from "../../server/persistence/fractional-index";
import type { CellInput } from "../../server/persistence/types";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

let t: TestDatabase;

const cells = (count: number, prefix: string): CellInput[] => Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, kind: "code", source: `print(${i})` }));

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("cell writes", () => {
    it("bumps the expected version, and refuses a stale one or a deleted notebook without writing", async () => {
      const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "Versions" });
      const version = await t.db.prisma.$transaction((tx) => bumpVersion(tx, notebook.id, 0));
      assert.equal(version, 1);
      await assert.rejects(
        t.db.prisma.$transaction((tx) => bumpVersion(tx, notebook.id, 0)),
        (error: unknown) => error instanceof VersionConflictError && error.currentVersion === 1,
      );
      assert.equal((await t.notebooks.load(notebook.id)).version, 1, "the stale writer changed nothing");
      await t.notebooks.softDelete(notebook.id);
      await assert.rejects(t.db.prisma.$transaction((tx) => bumpVersion(tx, notebook.id, undefined)), NotFoundError);
      await assert.rejects(t.db.prisma.$transaction((tx) => bumpVersion(tx, "no-such-notebook", undefined)), NotFoundError);
    });

    it("inserts more cells than one statement takes, in order, and renumbers them to short keys", async () => {
      const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "Many cells" });
      const many = cells(CHUNK + 5, "c");
      // Long keys on purpose: what a long run of inserts at one place leaves behind.
      const keys = keysBetween(null, null, many.length).map((key) => `${"m".repeat(40)}${key}`);
      await t.db.prisma.$transaction((tx) => insertCells(tx, notebook.id, many, keys));
      const order = await t.db.prisma.$transaction((tx) => positions(tx, notebook.id));
      assert.deepEqual(order.map((row) => row.id), many.map((cell) => cell.id));
      await t.db.prisma.$transaction((tx) => renumber(tx, notebook.id));
      const after = await t.db.prisma.$transaction((tx) => positions(tx, notebook.id));
      assert.deepEqual(after.map((row) => row.id), many.map((cell) => cell.id), "the order is kept");
      assert.deepEqual(after.map((row) => row.position), keysBetween(null, null, many.length));
      assert.deepEqual((await t.notebooks.load(notebook.id)).cells.map((cell) => cell.source), many.map((cell) => cell.source));
    });
  });
});
