/**
 * PostgreSQL restarts (an operator's restart, or a crash and recovery)
 * while a cell prints: the lab's writes wait for the database and go
 * through once it is back, so every line a viewer was shown is stored,
 * once and in order, the run ends "ok", and nothing stays "running".
 * (Found by the chaos run, `npm run chaos`: before, the writes that met the
 * restart were dropped and the viewers were shown their lines anyway.)
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { toNotebookDocument } from "../../server/persistence";
import { shownText, storedText } from "../helpers/cell-text";
import { postgresUnavailable, startPostgres, type TestPostgres } from "../helpers/postgres";
import { SocketHarness } from "../helpers/socket-harness";

const LIMIT = { timeout: 180_000 };
const LINES = 400;
/** Numbered lines over ~4 s: each progress write (every 200 ms) carries a few. */
const NUMBERED = `import time\nfor i in range(${LINES}):\n    print(f'line {i}', flush=True)\n    time.sleep(0.01)\nprint('done')`;
const EXPECTED = `${Array.from({ length: LINES }, (_, i) => `line ${i}\n`).join("")}done\n`;

describe("PostgreSQL restarts under a running cell", { skip: postgresUnavailable() ?? false }, () => {
  let server: TestPostgres;
  let harness: SocketHarness;
  before(async () => {
    // A crash of PostgreSQL (immediate shutdown) keeps what it confirmed, as in production.
    server = await startPostgres({ crashSafe: true });
    harness = await SocketHarness.start({ databaseUrl: await server.createDatabase("restart") });
  });
  after(async () => {
    await harness?.close();
    await server?.stop();
  });

  for (const mode of ["fast", "immediate"] as const) {
    it(`${mode} shutdown and start while a cell prints: every line shown is stored once, in order, and the run ends ok`, LIMIT, async () => {
      const client = await harness.client();
      try {
        const created = await client.sendLab({ op: "create-notebook", title: `restart ${mode}` });
        assert.ok(created.ok && created.notebook);
        const notebookId = created.notebook.id;
        const opened = await client.send({ op: "open", notebookId });
        assert.ok(opened.ok && opened.notebook);
        const cellId = opened.notebook.cells[0]!.id;
        const ran = await client.run(notebookId, { [cellId]: NUMBERED });
        assert.ok(ran.ok, JSON.stringify(ran));
        await client.waitFor(() => shownText(client.events, cellId).split("\n").length > 40);
        await server.restart(mode);
        assert.ok(!shownText(client.events, cellId).includes("done"), "the database restarted while the cell still printed");
        const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
        assert.ok(finished.type === "cell-finished" && finished.status === "ok", JSON.stringify(finished));
        assert.equal(shownText(client.events, cellId), EXPECTED, "the viewer was shown every line once");

        // Disposing the runtime drains its writes; what is stored is then read back from PostgreSQL.
        await (await harness.lab.hub.get(notebookId))!.dispose();
        const stored = toNotebookDocument(await harness.lab.catalog.repos.notebooks.load(notebookId));
        assert.equal(storedText(stored, cellId), EXPECTED, "the cell's stored outputs");
        assert.equal(stored.cells[0]!.lastRun?.status, "ok");
        const executionId = stored.cells[0]!.executionId;
        assert.ok(executionId);
        const log = await harness.lab.catalog.repos.runs.executionOutputs(executionId);
        assert.equal(log.map((output) => (output.kind === "stream" ? output.text : "")).join(""), EXPECTED, "the execution's output log");
        assert.equal((await harness.lab.catalog.repos.runs.getExecution(executionId)).status, "ok", "the execution is stored as ended");
      } finally {
        client.close();
      }
    });
  }
});
