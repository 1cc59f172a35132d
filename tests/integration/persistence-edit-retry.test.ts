/**
 * A notebook edit whose COMMIT went through but whose answer was lost (the
 * connection dropped during the COMMIT: a PostgreSQL restart makes this
 * fault) is stored once, reported as saved, and the notebook's next edit
 * goes through, on SQLite and PostgreSQL. Before edits carried an id, the
 * write queue's retry ran the edit again on its old version, was refused as
 * a conflict with itself, reported the stored edit as failed, and left the
 * runtime's version behind, so every later edit of the notebook on that
 * server failed as a conflict until it was loaded again.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DatabaseNotebookPersistence } from "../../server/notebook/notebook-persistence";
import { isDatabaseUnreachable, NotebookRepository, PredictionRepository, VersionConflictError, type PrismaClient } from "../../server/persistence";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

let t: TestDatabase;

/** What node-postgres says when the connection dies under a query (the lab retries on it). */
const DROPPED = "Connection terminated unexpectedly";

/**
 * How the next interactive transaction fails, once: "answer-lost" runs it to
 * its COMMIT and then throws as the dropped connection does; "before" throws
 * without running it (the database was already gone).
 */
type Fault = "answer-lost" | "before";

/** The lab's client, with a fault armed for its next interactive transaction (an edit's), and a count of those. */
function faultyClient(prisma: PrismaClient) {
  let armed: Fault | null = null;
  let transactions = 0;
  const client = new Proxy(prisma, {
    get(target, key) {
      if (key !== "$transaction") return Reflect.get(target, key);
      return async (...args: Parameters<PrismaClient["$transaction"]>) => {
        // The batch form (a load's reads) passes an array: only edits' transactions are faulted and counted.
        if (typeof args[0] !== "function") return target.$transaction(...args);
        transactions += 1;
        const fault = armed;
        armed = null;
        if (fault === "before") throw new Error(DROPPED);
        const result = await target.$transaction(...args);
        if (fault === "answer-lost") throw new Error(DROPPED);
        return result;
      };
    },
  });
  return {
    client,
    arm: (fault: Fault) => {
      armed = fault;
    },
    transactions: () => transactions,
  };
}

/** A notebook opened as the lab opens one (database-catalog.ts), its edits going through a client that can fail. */
async function openNotebook() {
  const stored = await t.notebooks.create({ ownerId: t.ownerId, title: "edits", cells: [{ id: "a", kind: "code", source: "print('a')" }] });
  const faulty = faultyClient(t.db.prisma);
  const repos = { notebooks: new NotebookRepository(faulty.client), runs: t.runs, metrics: t.metrics, predictions: new PredictionRepository(t.db.prisma) };
  const reports: string[] = [];
  const persistence = new DatabaseNotebookPersistence(stored.id, stored.version, repos, stored.ownerId, (message) => reports.push(message));
  return { notebookId: stored.id, version: stored.version, persistence, reports, ...faulty };
}

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("a runtime edit tried again after the database dropped the connection", () => {
    it("the fault is one the write queue waits out", () => {
      assert.ok(isDatabaseUnreachable(new Error(DROPPED)));
    });

    it("whose COMMIT went through is stored once, answered as saved, and the next edit goes through", async () => {
      const notebook = await openNotebook();
      notebook.arm("answer-lost");
      await notebook.persistence.setSource("a", "print('edited')");
      assert.ok(notebook.reports.some((report) => /a cell's source waits for the database/.test(report)), "the first attempt's answer was lost");
      assert.ok(!notebook.reports.some((report) => /failed/.test(report)), `nothing reported as failed: ${notebook.reports.join("; ")}`);
      assert.equal(notebook.transactions(), 1, "the retry saw its edit stored and ran nothing again");
      let stored = await t.notebooks.load(notebook.notebookId);
      assert.equal(stored.version, notebook.version + 1, "the edit bumped the version once");
      assert.equal(stored.cells[0]!.source, "print('edited')");
      assert.equal(notebook.persistence.sourceUnstored("a"), false, "the runtime knows its text is stored");

      await notebook.persistence.insertCell(1, { id: "b", kind: "code", source: "print('b')" });
      await notebook.persistence.setSource("a", "print('edited again')");
      stored = await t.notebooks.load(notebook.notebookId);
      assert.equal(stored.version, notebook.version + 3);
      assert.deepEqual(
        stored.cells.map((cell) => [cell.id, cell.source]),
        [
          ["a", "print('edited again')"],
          ["b", "print('b')"],
        ],
      );
      assert.ok(!notebook.reports.some((report) => /failed/.test(report)), `nothing reported as failed: ${notebook.reports.join("; ")}`);
    });

    it("whose first attempt was not stored is stored by the retry, once", async () => {
      const notebook = await openNotebook();
      notebook.arm("before");
      await notebook.persistence.setSource("a", "print('edited')");
      assert.ok(notebook.reports.some((report) => /waits for the database/.test(report)), "the first attempt failed");
      assert.equal(notebook.transactions(), 2, "the retry ran the edit");
      const stored = await t.notebooks.load(notebook.notebookId);
      assert.equal(stored.version, notebook.version + 1);
      assert.equal(stored.cells[0]!.source, "print('edited')");
      await notebook.persistence.setSource("a", "print('next')");
      assert.equal((await t.notebooks.load(notebook.notebookId)).version, notebook.version + 2);
    });

    it("still refuses a real conflict: another writer changed the notebook before the retry", async () => {
      const notebook = await openNotebook();
      // A writer the runtime does not know of (a version-checked REST save) bumps the version first.
      await t.notebooks.updateCellSource(notebook.notebookId, notebook.version, "a", "print('theirs')");
      notebook.arm("before");
      await assert.rejects(notebook.persistence.setSource("a", "print('mine')"), VersionConflictError);
      assert.equal(notebook.transactions(), 2, "the retry ran the edit, and the version check refused it");
      const stored = await t.notebooks.load(notebook.notebookId);
      assert.equal(stored.version, notebook.version + 1, "only the other writer's edit");
      assert.equal(stored.cells[0]!.source, "print('theirs')");
      assert.equal(notebook.persistence.sourceUnstored("a"), true, "the runtime knows its text is not stored");
    });
  });
});
