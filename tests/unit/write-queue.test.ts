/**
 * The notebook's write queue waits out an unreachable database (retrying
 * the write, the ones behind it waiting in order) and fails a write's own
 * errors at once; which errors mean "unreachable" is decided from the
 * shapes Prisma's PostgreSQL adapter and node-postgres really throw (seen
 * across a real restart in tests/integration/postgres-restart.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WriteQueue } from "../../server/notebook/write-queue";
import { isDatabaseUnreachable } from "../../server/persistence/errors";

/** As Prisma reports a statement PostgreSQL refused while it shuts down or starts. */
function adapterError(code: string, sqlState: string): Error {
  return Object.assign(new Error(`Database error. Code: \`${sqlState}\``), { code, meta: { driverAdapterError: { name: "DriverAdapterError", cause: { originalCode: sqlState, kind: "postgres", code: sqlState } } } });
}

describe("database unreachable", () => {
  it("is a refused or dropped connection, or a server going down or starting", () => {
    assert.ok(isDatabaseUnreachable(Object.assign(new Error("Can't reach database server"), { code: "P1001", meta: { driverAdapterError: { cause: { kind: "DatabaseNotReachable" } } } })));
    assert.ok(isDatabaseUnreachable(Object.assign(new Error("Server has closed the connection."), { code: "P1017", meta: { driverAdapterError: { cause: { kind: "ConnectionClosed" } } } })));
    assert.ok(isDatabaseUnreachable(adapterError("P2039", "57P03")), "the database system is starting up");
    assert.ok(isDatabaseUnreachable(adapterError("P2010", "57P01")), "terminating connection due to administrator command");
    assert.ok(isDatabaseUnreachable(adapterError("P2010", "08006")), "connection failure");
    assert.ok(isDatabaseUnreachable(new Error("Client has encountered a connection error and is not queryable")), "a transaction on a connection that died");
    assert.ok(isDatabaseUnreachable(new Error("Connection terminated unexpectedly")));
    assert.ok(isDatabaseUnreachable(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })));
  });

  it("is not the write's own failure", () => {
    assert.ok(!isDatabaseUnreachable(Object.assign(new Error("Unique constraint failed"), { code: "P2002" })));
    assert.ok(!isDatabaseUnreachable(adapterError("P2010", "23505")), "unique violation");
    assert.ok(!isDatabaseUnreachable(adapterError("P2010", "57014")), "a statement cancelled by its timeout");
    assert.ok(!isDatabaseUnreachable(new Error("notebook n1 is at version 3, not 2")));
    assert.ok(!isDatabaseUnreachable(null));
    assert.ok(!isDatabaseUnreachable("P1001"));
  });
});

describe("write queue", () => {
  const unreachable = (): Error => Object.assign(new Error("Can't reach database server"), { code: "P1001" });

  it("retries a write while the database is unreachable, and the writes behind it wait in order", async () => {
    const done: string[] = [];
    const waited: string[] = [];
    const queue = new WriteQueue(() => assert.fail("nothing fails"), { when: isDatabaseUnreachable, limitMs: 10_000, onRetry: (_error, what) => waited.push(what) });
    let failures = 3;
    const first = queue.run("outputs", async () => {
      if (failures-- > 0) throw unreachable();
      done.push("outputs");
      return 1;
    });
    const second = queue.run("a finished execution", async () => {
      done.push("finished");
      return 2;
    });
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(done, ["outputs", "finished"]);
    assert.deepEqual(waited, ["outputs"], "told once per write that waits");
  });

  it("fails a write's own error at once, reports it, and goes on with the next", async () => {
    const reported: string[] = [];
    const queue = new WriteQueue((_error, what) => reported.push(what), { when: isDatabaseUnreachable, limitMs: 10_000 });
    let tries = 0;
    const failed = queue.run("a prediction", async () => {
      tries += 1;
      throw Object.assign(new Error("Unique constraint failed"), { code: "P2002" });
    });
    await assert.rejects(failed, /Unique constraint/);
    assert.equal(tries, 1);
    assert.equal(await queue.run("next", async () => "ok"), "ok");
    assert.deepEqual(reported, ["a prediction"]);
  });

  it("gives up on an unreachable database after its limit, as any failure", async () => {
    const reported: string[] = [];
    const queue = new WriteQueue((_error, what) => reported.push(what), { when: isDatabaseUnreachable, limitMs: 250 });
    let tries = 0;
    await assert.rejects(
      queue.run("outputs", async () => {
        tries += 1;
        throw unreachable();
      }),
      /Can't reach/,
    );
    assert.ok(tries >= 2, `tried ${tries} times`);
    assert.deepEqual(reported, ["outputs"]);
  });

  it("without a retry rule fails at once (SQLite: nothing to wait for)", async () => {
    const queue = new WriteQueue(() => undefined);
    let tries = 0;
    await assert.rejects(
      queue.run("outputs", async () => {
        tries += 1;
        throw unreachable();
      }),
    );
    assert.equal(tries, 1);
  });
});
