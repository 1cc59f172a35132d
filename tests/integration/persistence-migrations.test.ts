/** Migrations with the WebAssembly schema engine on a real SQLite file: apply, re-open, drift. */
import assert from "node:assert/strict";
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { checkDrift, closeDatabase, getDatabase, openDatabase } from "../../server/persistence/database";
import { diffToSchema, MIGRATIONS_DIR, readMigrationList, SCHEMA_PATH } from "../../server/persistence/migrations";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-migrate-"));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("migrations", () => {
  it("apply on an empty database, record themselves as the CLI does, and match schema.prisma", async () => {
    const dir = tempDir();
    const db = await openDatabase({ dataDir: dir });
    try {
      const names = (await readMigrationList()).migrationDirectories.map((entry) => entry.path);
      assert.ok(names.length >= 1 && names[0]!.endsWith("_init"));
      assert.deepEqual(db.appliedMigrations, names);
      assert.equal(db.file, path.join(dir, "lab.db"));
      const recorded = await db.prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: unknown }>>(
        `SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name`,
      );
      assert.deepEqual(recorded.map((row) => row.migration_name), names);
      assert.ok(recorded.every((row) => row.finished_at !== null));
      assert.equal(await checkDrift(db), "", "the migrated database matches schema.prisma");
      const [journal] = await db.prisma.$queryRawUnsafe<Array<{ journal_mode: string }>>("PRAGMA journal_mode");
      assert.equal(journal!.journal_mode, "wal");
      const [fk] = await db.prisma.$queryRawUnsafe<Array<{ foreign_keys: bigint }>>("PRAGMA foreign_keys");
      assert.equal(Number(fk!.foreign_keys), 1);
    } finally {
      await db.close();
    }
    const again = await openDatabase({ dataDir: dir });
    assert.deepEqual(again.appliedMigrations, [], "a second open applies nothing");
    await again.close();
  });

  it("the migrations directory holds all of schema.prisma (no migration missing)", async () => {
    assert.equal(await diffToSchema("migrations"), "");
  });

  it("reports drift when schema.prisma changes without a migration, and when the database was changed by hand", async () => {
    const dir = tempDir();
    const prismaDir = path.join(dir, "prisma");
    cpSync(MIGRATIONS_DIR, path.join(prismaDir, "migrations"), { recursive: true });
    const schemaPath = path.join(prismaDir, "schema.prisma");
    writeFileSync(schemaPath, readFileSync(SCHEMA_PATH, "utf8").replace("  deletedAt DateTime?\n", "  deletedAt DateTime?\n  colour    String?\n"));
    const paths = { schemaPath, migrationsDir: path.join(prismaDir, "migrations") };
    const next = await diffToSchema("migrations", ":memory:", paths);
    assert.match(next, /ALTER TABLE "Notebook" ADD COLUMN "colour" TEXT/);

    const db = await openDatabase({ dataDir: dir });
    await db.close();
    const raw = new BetterSqlite3(db.file);
    raw.exec(`CREATE INDEX "stray_idx" ON "Cell"("source")`);
    raw.close();
    assert.match(await checkDrift(db.file), /DROP INDEX "stray_idx"/);
  });

  it("refuses a migrations directory with nothing in it, with a clear error", async () => {
    const dir = tempDir();
    copyFileSync(path.join(MIGRATIONS_DIR, "migration_lock.toml"), path.join(dir, "migration_lock.toml"));
    await assert.rejects(openDatabase({ dataDir: dir, migrationsDir: dir }), /no migrations in/);
  });
});

describe("the database connection", () => {
  it("keeps statements outside a transaction out of an open one: no dirty reads, no lost writes on rollback", async () => {
    const db = await openDatabase({ dataDir: tempDir() });
    try {
      const user = await db.prisma.user.create({ data: { name: "before", email: "before@users.invalid" } });
      let insideStarted!: () => void;
      const started = new Promise<void>((resolve) => (insideStarted = resolve));
      const failing = db.prisma.$transaction(async (tx) => {
        await tx.user.update({ where: { id: user.id }, data: { name: "uncommitted" } });
        insideStarted();
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new Error("rolled back");
      });
      await started;
      const [read] = await Promise.all([
        db.prisma.user.findUnique({ where: { id: user.id }, select: { name: true } }),
        db.prisma.user.create({ data: { id: "outside", name: "written outside", email: "outside@users.invalid" } }),
        assert.rejects(failing, /rolled back/),
      ]);
      assert.equal(read!.name, "before");
      assert.ok(await db.prisma.user.findUnique({ where: { id: "outside" } }), "the outside write survived the rollback");
    } finally {
      await db.close();
    }
  });

  it("getDatabase opens one shared client per process", async () => {
    const previous = process.env.MGPULAB_DATA_DIR;
    process.env.MGPULAB_DATA_DIR = tempDir();
    try {
      const [a, b] = await Promise.all([getDatabase(), getDatabase()]);
      assert.equal(a, b);
      assert.equal(a.file, path.join(process.env.MGPULAB_DATA_DIR, "lab.db"));
      await closeDatabase();
      const c = await getDatabase();
      assert.notEqual(c, a);
      await closeDatabase();
    } finally {
      if (previous === undefined) delete process.env.MGPULAB_DATA_DIR;
      else process.env.MGPULAB_DATA_DIR = previous;
    }
  });
});
