/**
 * A whole lab on PostgreSQL (openLab with a database URL): Better Auth's
 * accounts and sessions, the notebook runtime running a real cell into the
 * output log and metric series, and a restarted lab finding it all. The
 * repositories' own cases run on both databases in persistence-*.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { databaseProviderOf } from "../../server/persistence";
import { signIn } from "../helpers/lab-session";
import { postgresUnavailable, startPostgres, type TestPostgres } from "../helpers/postgres";
import { SocketHarness } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";
/** The cookie secret, the same across the restart (by default it lives in the harness's temp directory). */
const auth = { secret: "a-test-secret-of-enough-length-0123456789" };

describe("a lab on PostgreSQL", { skip: postgresUnavailable() ?? false }, () => {
  let server: TestPostgres;
  let databaseUrl: string;
  let harness: SocketHarness;
  before(async () => {
    server = await startPostgres();
    databaseUrl = await server.createDatabase();
    harness = await SocketHarness.start({ databaseUrl, auth });
  });
  after(async () => {
    await harness?.close();
    await server?.stop();
  });

  it("signs a member in with a password and runs a cell: outputs, run and metrics stored in PostgreSQL", LIMIT, async () => {
    assert.equal(harness.lab.db.provider, "postgresql");
    // What Better Auth's Prisma adapter is told (lab-auth.ts): nothing it does for this lab behaves differently
    // per provider today (case-insensitive filters and UUID ids are unused), so the test checks what it is given.
    assert.equal(databaseProviderOf(harness.lab.db.prisma), "postgresql");
    const member = await harness.lab.access.accounts.create({ name: "Pat", email: "pat@example.com", password: PASSWORD, role: "member" });
    const cookie = await signIn(harness.url, member.email, PASSWORD);
    assert.equal(await harness.lab.db.prisma.session.count({ where: { userId: member.id } }), 1, "Better Auth stored the session in PostgreSQL");

    const client = await harness.client(cookie);
    try {
      const created = await client.sendLab({ op: "create-notebook", title: "on postgres" });
      assert.ok(created.ok && created.notebook, created.ok ? "" : created.error);
      const id = created.notebook.id;
      const opened = await client.send({ op: "open", notebookId: id });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      await client.run(id, { [cellId]: "import mgpulab as lab\nprint(6 * 7)\nfor step in range(5):\n    lab.log(step, loss=1.0 / (step + 1))" });
      const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      assert.ok(finished.type === "cell-finished" && finished.status === "ok", JSON.stringify(finished));
      // Disposing the runtime drains its batched writes.
      await (await harness.lab.hub.get(id))!.dispose();

      const stored = await harness.lab.catalog.repos.notebooks.load(id);
      assert.deepEqual(stored.cells[0]!.outputs, [{ kind: "stream", name: "stdout", text: "42\n" }]);
      assert.equal(stored.cells[0]!.lastRun?.status, "ok");
      const [run] = await harness.lab.catalog.repos.runs.list(id);
      assert.ok(run);
      assert.equal(run.userId, member.id);
      const [loss] = await harness.lab.catalog.repos.metrics.series(run.id, { name: "loss" });
      assert.deepEqual(loss?.step, [0, 1, 2, 3, 4]);
      assert.deepEqual(loss?.value, [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]);
    } finally {
      client.close();
    }
  });

  it("a lab restarted on the same database finds the notebook, its outputs and the member's session", LIMIT, async () => {
    const cookie = await signIn(harness.url, "pat@example.com", PASSWORD);
    await harness.close();
    harness = await SocketHarness.start({ databaseUrl, auth });
    assert.deepEqual(harness.lab.db.appliedMigrations, [], "already migrated");
    const client = await harness.client(cookie);
    try {
      const listed = await client.sendLab({ op: "list-notebooks" });
      assert.ok(listed.ok && listed.notebooks);
      const notebook = listed.notebooks.find((item) => item.title === "on postgres");
      assert.ok(notebook, "the member's notebook survived the restart");
      const opened = await client.send({ op: "open", notebookId: notebook.id });
      assert.ok(opened.ok && opened.notebook);
      assert.deepEqual(opened.notebook.cells[0]!.outputs, [{ kind: "stream", name: "stdout", text: "42\n" }]);
    } finally {
      client.close();
    }
  });
});
