/**
 * Notebook driver leases on a real database: which of several lab servers
 * drives a notebook is decided by the database, one conditional statement
 * at a time, so two servers racing for a notebook never both win.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DriverLeases } from "../../server/cluster/driver-leases";
import { createTestDatabase, type TestDatabase } from "./persistence-harness";

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
