/**
 * A cell's text whose write failed is stored when the page sends it again.
 * The server shows an edit to viewers as it takes it; when the database then
 * refuses the write (here: a trigger that aborts the update, as a disk error
 * would; in the chaos run, a PostgreSQL restart), the page is told
 * and sends the same text again. That retry used to be answered "saved"
 * without a write, because the server's document already had the text: the
 * database kept the old one, and the next server to load the notebook showed
 * the page a "conflict with another tab" with its own edit (chaos long run 5,
 * RELIABILITY.md fix 13).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { resolveDatabaseFile } from "../../server/persistence";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("a cell's text whose write failed", () => {
  let dataDir: string;
  let harness: SocketHarness;
  let client: TestClient;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-source-write-"));
    harness = await SocketHarness.start({ dataDir });
    client = await harness.client();
  });

  after(async () => {
    client.close();
    await harness.close({ keepData: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is written when the page sends it again, not answered as saved from memory", LIMIT, async () => {
    const notebookId = await harness.createNotebook("a write that fails");
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    const cell = opened.notebook.cells[0]!;
    const edit = { op: "set-source", notebookId, cellId: cell.id, source: "print('kept')", baseHash: sourceHash(cell.source) } as const;
    const storedSource = (db: BetterSqlite3.Database): string =>
      (db.prepare('SELECT "source" FROM "Cell" WHERE "notebookId" = ? AND "id" = ?').get(notebookId, cell.id) as { source: string }).source;

    const other = new BetterSqlite3(resolveDatabaseFile({ dataDir }), { fileMustExist: true });
    try {
      // The database refuses the update (and only that one), the way a failing disk would.
      other.exec(`CREATE TRIGGER "refuse_source" BEFORE UPDATE OF "source" ON "Cell" BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END`);
      const refused = await client.send(edit);
      assert.equal(refused.ok, false, "the page is told its text was not saved");
      other.exec(`DROP TRIGGER "refuse_source"`);
      assert.equal(storedSource(other), cell.source, "nothing was stored");

      // The page's retry: the same text on the same base.
      const retried = await client.send(edit);
      assert.ok(retried.ok, JSON.stringify(retried));
      assert.equal(storedSource(other), "print('kept')", "the retry's answer means the text is stored");
    } finally {
      other.close();
    }
  });
});
