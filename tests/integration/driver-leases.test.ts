/**
 * Notebook driver leases on a real database: which of several lab servers
 * drives a notebook is decided by the database, one conditional statement
 * at a time, so two servers racing for a notebook never both win.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { randomUUID } from "node:crypto";
import { DriverLeases } from "../../server/persistence/driver-leases";
import { NotDrivingError, RunRepository } from "../../server/persistence";
import { sqlOf } from "../../server/persistence/database";
import type { Sql, SqlQueries } from "../../server/persistence/sql";
import { createTestDatabase, forEachDatabase, type TestDatabase } from "./persistence-harness";

describe("notebook driver leases", () => {
  let t: TestDatabase;
  let now = Date.parse("2026-11-26T08:00:00Z");
  const clock = () => now;
  const server = (serverId: string) => new DriverLeases(t.db.prisma, { serverId, leaseMs: 10_000, clock });

  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t.close();
  });

  async function notebook(): Promise<string> {
    return (await t.notebooks.create({ ownerId: t.ownerId, title: "leased" })).id;
  }

  it("the first server to claim a notebook drives it; another is told who does until the lease lapses, then takes it over", async () => {
    const [a, b] = [server("a"), server("b")];
    const id = await notebook();
    assert.deepEqual(await a.claim(id), { mine: true, from: null });
    const refused = await b.claim(id);
    assert.equal(refused.mine, false);
    assert.equal(!refused.mine && refused.serverId, "a");
    assert.equal(await b.driverOf(id), "a");
    assert.deepEqual(await a.claim(id), { mine: true, from: null }, "the driver's own claim renews it");

    now += 9_000;
    assert.equal((await b.claim(id)).mine, false, "renewed at the claim: still a's 9 s later");
    now += 2_000;
    assert.equal(await b.driverOf(id), null, "lapsed: nobody drives it");
    assert.deepEqual(await b.claim(id), { mine: true, from: "a" }, "b takes it over, and knows from whom");
    assert.equal((await a.claim(id)).mine, false, "a, back, is told b drives it");
  });

  it("many servers racing for one notebook: exactly one wins", async () => {
    const id = await notebook();
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => server(`racer-${i}`).claim(id)));
    const winners = claims.filter((claim) => claim.mine);
    assert.equal(winners.length, 1);
    const driver = await server("observer").driverOf(id);
    assert.ok(driver?.startsWith("racer-"));
    for (const claim of claims) if (!claim.mine) assert.equal(claim.serverId, driver);
  });

  it("renew keeps a server's leases alive and says which it still holds; release and releaseAll give them up", async () => {
    const [a, b] = [server("renew-a"), server("renew-b")];
    const [one, two] = [await notebook(), await notebook()];
    await a.claim(one);
    await a.claim(two);
    now += 8_000;
    assert.deepEqual([...(await a.renew())].sort(), [one, two].sort());
    now += 8_000;
    assert.equal((await b.claim(one)).mine, false, "renewed 8 s ago: still a's");
    now += 3_000;
    assert.deepEqual(await b.claim(one), { mine: true, from: "renew-a" });
    assert.deepEqual([...(await a.renew())], [two], "a learns it lost one");
    await a.release(two);
    assert.deepEqual(await b.claim(two), { mine: true, from: null }, "released: claimed at once, from nobody");
    await b.releaseAll();
    assert.equal(await a.driverOf(one), null);
    assert.equal(await a.driverOf(two), null);
  });

  it("orphaned notebooks are those with a running kernel run and no live driver", async () => {
    const [a, b] = [server("orphan-a"), server("orphan-b")];
    const [driven, orphaned, idle] = [await notebook(), await notebook(), await notebook()];
    for (const id of [driven, orphaned]) await t.runs.start({ notebookId: id, host: "local", deviceMode: "cpu" });
    await a.claim(driven);
    await a.claim(orphaned);
    await b.claim(idle);
    assert.deepEqual(await b.orphanedNotebooks(), [], "both runs have a live driver");
    await a.release(orphaned);
    assert.deepEqual(await b.orphanedNotebooks(), [orphaned], "released (a clean stop) with its run still open");
    assert.deepEqual((await b.liveServers()).sort(), ["orphan-a", "orphan-b"]);
    now += 11_000;
    assert.deepEqual((await b.orphanedNotebooks()).sort(), [driven, orphaned].sort(), "a's lease lapsed too (a died)");
    assert.deepEqual(await b.liveServers(), []);
  });

  it("a notebook that does not exist cannot be claimed", async () => {
    await assert.rejects(server("nobody").claim("no-such-notebook"));
  });
});

/**
 * The fence between a server that lost a notebook and the one that took it over (issue 31: a line stored
 * twice). The loser's group commit, already in flight, must either land before the winner reads the
 * kernel's read position, or not at all; the winner replays from that position, so each line is stored once.
 */
forEachDatabase((kind) => {
  describe("a group commit is fenced by the notebook's driver lease", () => {
    let t: TestDatabase;
    let now = Date.parse("2026-11-27T08:00:00Z");
    const clock = () => now;
    const server = (serverId: string) => new DriverLeases(t.db.prisma, { serverId, leaseMs: 10_000, clock });

    before(async () => {
      t = await kind.create();
    });
    after(async () => {
      await t.close();
    });

    async function runningNotebook(): Promise<{ notebookId: string; runId: string }> {
      const notebookId = (await t.notebooks.create({ ownerId: t.ownerId, title: "fenced" })).id;
      const run = await t.runs.start({ notebookId, host: "gpu-1", deviceMode: "cpu" });
      return { notebookId, runId: run.id };
    }
    const position = async (runId: string) => (await t.db.prisma.kernelRun.findUniqueOrThrow({ where: { id: runId }, select: { agentSeq: true } })).agentSeq;
    const commitOf = (notebookId: string, driver: string) => ({ notebookId, commitId: randomUUID(), retried: false, driver });

    it("a server's commit is stored while it drives the notebook, and refused once another server took it over", async () => {
      const { notebookId, runId } = await runningNotebook();
      const [a, b] = [server("fence-a"), server("fence-b")];
      assert.deepEqual(await a.claim(notebookId), { mine: true, from: null });
      await t.runs.write([{ kind: "read-position", runId, agentSeq: 5 }], commitOf(notebookId, "fence-a"));
      assert.equal(await position(runId), 5);

      now += 11_000; // a was cut off: its lease lapsed, and b takes the notebook over
      assert.deepEqual(await b.claim(notebookId), { mine: true, from: "fence-a" });
      const before = await t.counts();
      await assert.rejects(
        t.runs.write([{ kind: "read-position", runId, agentSeq: 9 }], commitOf(notebookId, "fence-a")),
        (error: unknown) => error instanceof NotDrivingError && error.driver === "fence-b" && /fence-b drives notebook/.test(error.message),
      );
      assert.equal(await position(runId), 5, "the loser's commit stored nothing: the new driver replays from 5");
      assert.deepEqual(await t.counts(), before);
      await t.runs.write([{ kind: "read-position", runId, agentSeq: 9 }], commitOf(notebookId, "fence-b"));
      assert.equal(await position(runId), 9, "the new driver's commits are stored");

      await b.release(notebookId); // a clean stop: no driver, so no other server to refuse for
      await t.runs.write([{ kind: "read-position", runId, agentSeq: 12 }], commitOf(notebookId, "fence-a"));
      assert.equal(await position(runId), 12);
    });

    it("a takeover that races a commit in flight waits for it, then reads a position that includes it", { skip: kind.provider !== "postgresql" && "SQLite has one writer at a time: a commit and a claim cannot interleave" }, async () => {
      const { notebookId, runId } = await runningNotebook();
      const [a, b] = [server("race-a"), server("race-b")];
      await a.claim(notebookId);
      await t.runs.write([{ kind: "read-position", runId, agentSeq: 3 }], commitOf(notebookId, "race-a"));

      // a's next commit stops inside its transaction, just after it read the driver row
      let reachedFence!: () => void;
      const atFence = new Promise<void>((resolve) => (reachedFence = resolve));
      let goOn!: () => void;
      const mayGoOn = new Promise<void>((resolve) => (goOn = resolve));
      const real = sqlOf(t.db.prisma);
      const paused: Sql = {
        ...real,
        provider: real.provider,
        time: (date) => real.time(date),
        all: (sql, params) => real.all(sql, params),
        run: (sql, params) => real.run(sql, params),
        close: () => real.close(),
        transaction: (body) =>
          real.transaction((tx) => {
            const held: SqlQueries = {
              time: (date) => tx.time(date),
              run: (sql, params) => tx.run(sql, params),
              all: async (sql, params) => {
                const rows = await tx.all(sql, params);
                if (sql.includes(`FROM "NotebookDriver"`)) {
                  reachedFence();
                  await mayGoOn;
                }
                return rows;
              },
            };
            return body(held);
          }),
      };
      const loser = new RunRepository(t.db.prisma, paused);
      const inFlight = loser.write([{ kind: "read-position", runId, agentSeq: 7 }], commitOf(notebookId, "race-a"));
      await atFence;

      now += 11_000;
      let claimed = false;
      const claim = b.claim(notebookId).then((answer) => ((claimed = true), answer));
      // The claim's UPDATE waits on the driver row a's transaction locked (an event PostgreSQL reports).
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [row] = await t.db.prisma.$queryRawUnsafe<Array<{ waiting: bigint | number }>>(`SELECT count(*) AS waiting FROM pg_locks WHERE NOT granted`);
        if (Number(row?.waiting ?? 0) > 0) break;
        assert.equal(claimed, false, "the new driver claimed the notebook while the old one's commit was in flight");
        assert.ok(Date.now() < deadline, "the claim neither waited nor finished");
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(claimed, false);
      goOn();
      await inFlight;
      assert.deepEqual(await claim, { mine: true, from: "race-a" });
      assert.equal(await position(runId), 7, "the winner reads the read position after the loser's last commit");
    });
  });
});
