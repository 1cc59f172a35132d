/** Migrations with the WebAssembly schema engine on SQLite and PostgreSQL: apply, re-open, drift; the connection's guarantees. */
import assert from "node:assert/strict";
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { checkDrift, closeDatabase, getDatabase, openDatabase, type DatabaseOptions } from "../../server/persistence/database";
import { resolveDatabaseTarget } from "../../server/persistence/database-target";
import { defaultPaths, diffToSchema, readMigrationList } from "../../server/persistence/migrations";
import { forEachDatabase, type DatabaseKind } from "./persistence-harness";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-migrate-"));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A fresh, empty database of `kind`: what openDatabase needs to open it. */
async function freshDatabase(kind: DatabaseKind): Promise<Pick<DatabaseOptions, "dataDir" | "url">> {
  const place = await kind.fresh();
  after(() => place.remove());
  return place.where;
}

/** How each provider shows its database: the file, or the URL without password. */
function describedAs(where: Pick<DatabaseOptions, "dataDir" | "url">): string {
  return where.url ?? path.join(where.dataDir!, "lab.db");
}

forEachDatabase((kind) => {
  describe("migrations", () => {
    it("apply on an empty database, record themselves as the CLI does, and match the schema", async () => {
      const where = await freshDatabase(kind);
      const db = await openDatabase(where);
      try {
        assert.equal(db.provider, kind.provider);
        const names = (await readMigrationList(defaultPaths(kind.provider).migrationsDir)).migrationDirectories.map((entry) => entry.path);
        assert.ok(names.length >= 1 && names[0]!.endsWith("_init"));
        assert.deepEqual(db.appliedMigrations, names);
        assert.equal(db.file, describedAs(where));
        const recorded = await db.prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: unknown }>>(
          `SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name`,
        );
        assert.deepEqual(recorded.map((row) => row.migration_name), names);
        assert.ok(recorded.every((row) => row.finished_at !== null));
        assert.equal(await checkDrift(db), "", "the migrated database matches the schema");
        if (kind.provider === "sqlite") {
          const [journal] = await db.prisma.$queryRawUnsafe<Array<{ journal_mode: string }>>("PRAGMA journal_mode");
          assert.equal(journal!.journal_mode, "wal");
          const [fk] = await db.prisma.$queryRawUnsafe<Array<{ foreign_keys: bigint }>>("PRAGMA foreign_keys");
          assert.equal(Number(fk!.foreign_keys), 1);
        } else {
          // PostgreSQL's per-connection settings: the pool's timeouts reach every session.
          const [settings] = await db.prisma.$queryRawUnsafe<Array<{ statement: string; lock: string; idle: string }>>(
            "SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle",
          );
          assert.deepEqual(settings, { statement: "1min", lock: "10s", idle: "1min" });
        }
        // Foreign keys hold on both (SQLite's only with the pragma above).
        await assert.rejects(db.prisma.$executeRawUnsafe(`INSERT INTO "NotebookShare" ("notebookId", "userId", "access") VALUES ('no-notebook', 'no-user', 'read')`));
      } finally {
        await db.close();
      }
      const again = await openDatabase(where);
      assert.deepEqual(again.appliedMigrations, [], "a second open applies nothing");
      await again.close();
    });

    // Several lab servers share one PostgreSQL database; a SQLite file is one server's (concurrent first opens of one
    // file in one process wait on each other's locks until the busy timeout: not a case the lab has).
    it("applies each migration once when several servers open one new database at the same moment", { skip: kind.provider === "sqlite" }, async () => {
      const where = await freshDatabase(kind);
      const opened = await Promise.all([openDatabase(where), openDatabase(where), openDatabase(where)]);
      try {
        const names = (await readMigrationList(defaultPaths(kind.provider).migrationsDir)).migrationDirectories.map((entry) => entry.path);
        assert.deepEqual(opened.flatMap((db) => db.appliedMigrations).sort(), names, "every migration applied by exactly one of them");
        const [recorded] = await opened[0]!.prisma.$queryRawUnsafe<Array<{ n: number | bigint }>>(`SELECT count(*) AS n FROM _prisma_migrations`);
        assert.equal(Number(recorded!.n), names.length);
      } finally {
        await Promise.all(opened.map((db) => db.close()));
      }
    });

    it("the migrations directory holds all of the schema (no migration missing)", async () => {
      const where = await freshDatabase(kind);
      const engineTarget = kind.provider === "sqlite" ? ":memory:" : resolveDatabaseTarget(where);
      assert.equal(await diffToSchema("migrations", engineTarget), "");
    });

    it("reports drift when the schema changes without a migration, and when the database was changed by hand", async () => {
      const dir = tempDir();
      const defaults = defaultPaths(kind.provider);
      const paths = { schemaPath: path.join(dir, "schema.prisma"), migrationsDir: path.join(dir, "migrations") };
      cpSync(defaults.migrationsDir, paths.migrationsDir, { recursive: true });
      writeFileSync(paths.schemaPath, readFileSync(defaults.schemaPath, "utf8").replace("  deletedAt DateTime?\n", "  deletedAt DateTime?\n  colour    String?\n"));
      const where = await freshDatabase(kind);
      const engineTarget = kind.provider === "sqlite" ? ":memory:" : resolveDatabaseTarget(where);
      assert.match(await diffToSchema("migrations", engineTarget, paths), /ALTER TABLE "Notebook" ADD COLUMN +"colour" TEXT/);

      const db = await openDatabase(where);
      try {
        await db.prisma.$executeRawUnsafe(`CREATE INDEX "stray_idx" ON "Cell"("source")`);
        assert.match(await checkDrift(db), /DROP INDEX "stray_idx"/);
      } finally {
        await db.close();
      }
    });

    it("refuses a migrations directory with nothing in it, with a clear error", async () => {
      const dir = tempDir();
      copyFileSync(path.join(defaultPaths(kind.provider).migrationsDir, "migration_lock.toml"), path.join(dir, "migration_lock.toml"));
      await assert.rejects(openDatabase({ ...(await freshDatabase(kind)), migrationsDir: dir }), /no migrations in/);
    });
  });

  describe("the database connection", () => {
    it("keeps statements outside a transaction out of an open one: no dirty reads, no lost writes on rollback", async () => {
      const db = await openDatabase(await freshDatabase(kind));
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

    it("getDatabase opens one shared client per process, where the environment says", async () => {
      const where = await freshDatabase(kind);
      const saved = { MGPULAB_DATA_DIR: process.env.MGPULAB_DATA_DIR, MGPULAB_DATABASE_URL: process.env.MGPULAB_DATABASE_URL };
      delete process.env.MGPULAB_DATA_DIR;
      delete process.env.MGPULAB_DATABASE_URL;
      if (where.dataDir) process.env.MGPULAB_DATA_DIR = where.dataDir;
      if (where.url) process.env.MGPULAB_DATABASE_URL = where.url;
      try {
        const [a, b] = await Promise.all([getDatabase(), getDatabase()]);
        assert.equal(a, b);
        assert.equal(a.provider, kind.provider);
        assert.equal(a.file, describedAs(where));
        await closeDatabase();
        const c = await getDatabase();
        assert.notEqual(c, a);
        await closeDatabase();
      } finally {
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
      }
    });
  });
});

describe("choosing the database", () => {
  it("refuses a URL that is not PostgreSQL's, saying what it takes", async () => {
    await assert.rejects(openDatabase({ url: "mysql://root@127.0.0.1/lab" }), /must be a postgres:\/\/ or postgresql:\/\/ URL/);
    await assert.rejects(openDatabase({ url: "lab.db" }), /not a URL/);
  });
});
