/** Which database the lab opens: SQLite by default, PostgreSQL by URL, with its pool; every refusal says what it takes. */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { DEFAULT_POOL_SIZE, resolveDatabaseTarget } from "../../server/persistence/database-target";

describe("the database target", () => {
  it("is the SQLite file under the data directory when no URL is given", () => {
    const target = resolveDatabaseTarget({}, { MGPULAB_DATA_DIR: "/srv/lab" });
    assert.deepEqual(target, { provider: "sqlite", file: path.join("/srv/lab", "lab.db"), description: path.join("/srv/lab", "lab.db") });
  });

  it("is PostgreSQL when MGPULAB_DATABASE_URL names it, with a sized pool, timeouts, and no password in its description", () => {
    const target = resolveDatabaseTarget({}, { MGPULAB_DATABASE_URL: "postgresql://lab:s%40cret@db.example:5433/mgpulab?sslmode=require", MGPULAB_DATABASE_POOL: "24" });
    assert.equal(target.provider, "postgresql");
    assert.ok(target.provider === "postgresql");
    assert.deepEqual(
      { ...target.pool, ssl: target.pool.ssl },
      {
        host: "db.example",
        port: 5433,
        user: "lab",
        password: "s@cret",
        database: "mgpulab",
        ssl: { rejectUnauthorized: false },
        application_name: "mgpulab",
        max: 24,
        connectionTimeoutMillis: 10_000,
        statement_timeout: 60_000,
        lock_timeout: 10_000,
        idle_in_transaction_session_timeout: 60_000,
      },
    );
    assert.equal(target.description, "postgresql://lab:***@db.example:5433/mgpulab?sslmode=require");
    assert.doesNotMatch(target.description, /cret/);
  });

  it("takes the URL from the options before the environment, and defaults the pool and port", () => {
    const target = resolveDatabaseTarget({ url: "postgres://127.0.0.1/lab" }, { MGPULAB_DATABASE_URL: "postgres://elsewhere/x" });
    assert.ok(target.provider === "postgresql");
    assert.equal(target.pool.host, "127.0.0.1");
    assert.equal(target.pool.port, 5432);
    assert.equal(target.pool.database, "lab");
    assert.equal(target.pool.max, DEFAULT_POOL_SIZE);
  });

  it("reaches a server on a Unix socket through ?host=", () => {
    const target = resolveDatabaseTarget({ url: "postgresql://lab@localhost/lab?host=/var/run/postgresql" }, {});
    assert.ok(target.provider === "postgresql");
    assert.equal(target.pool.host, "/var/run/postgresql");
  });

  it("refuses anything else clearly", () => {
    assert.throws(() => resolveDatabaseTarget({}, { MGPULAB_DATABASE_URL: "mysql://root@db/lab" }), /must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:/);
    assert.throws(() => resolveDatabaseTarget({}, { MGPULAB_DATABASE_URL: "file:./lab.db" }), /must be a postgres:\/\/ or postgresql:\/\/ URL/);
    assert.throws(() => resolveDatabaseTarget({ url: "data/lab.db" }, {}), /not a URL/);
    assert.throws(() => resolveDatabaseTarget({ url: "postgresql://db.example" }, {}), /must name a database/);
    assert.throws(() => resolveDatabaseTarget({ url: "postgresql://db/lab?pool_timeout=3" }, {}), /unsupported parameter "pool_timeout"/);
    assert.throws(() => resolveDatabaseTarget({ url: "postgresql://db/lab?sslmode=maybe" }, {}), /sslmode must be one of/);
    for (const size of ["0", "-1", "2.5", "many", "5000"]) {
      assert.throws(() => resolveDatabaseTarget({ url: "postgresql://db/lab" }, { MGPULAB_DATABASE_POOL: size }), /MGPULAB_DATABASE_POOL must be a whole number/);
    }
  });
});
