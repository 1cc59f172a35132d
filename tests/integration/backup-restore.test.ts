/**
 * `npm run lab -- backup` and `restore`, on SQLite and on PostgreSQL, with
 * the real lab server running: a backup made while a cell prints is a copy
 * of one moment — restored into a fresh data directory (a fresh database),
 * every notebook, run, prediction and workshop is the source's, and the
 * running cell's output is exactly what was stored when the copy was made
 * (a prefix of what came after). Restore refuses while a lab runs on the
 * target and changes nothing; over a stopped lab's data it replaces them
 * (SQLite keeps the old file aside) and the lab starts on them. A file
 * that is not a lab backup, or a backup of the other kind of database, is
 * refused with why.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DatabaseOptions } from "../../server/persistence";
import { LabServer } from "../helpers/lab-server";
import { labSnapshot, withLabDatabase, type LabSnapshot } from "../helpers/lab-snapshot";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { shownText } from "../helpers/cell-text";
import { pollUntilAsync } from "../helpers/daemons";
import { forEachDatabase, type DatabaseKind } from "./persistence-harness";

const LIMIT = { timeout: 240_000 };
const ROOT = path.resolve(__dirname, "..", "..");
/** Numbered lines, 20 a second, for long enough to back up under it; interrupted once the backup is done. */
const PRINTS = "import time\nfor i in range(3000):\n    print(f'line {i}', flush=True)\n    time.sleep(0.05)";

type Where = Pick<DatabaseOptions, "dataDir" | "url">;

/** The lab's settings that name a database: what the operator's environment holds. */
function envOf(where: Where): Record<string, string> {
  return where.url ? { MGPULAB_DATABASE_URL: where.url } : { MGPULAB_DATA_DIR: where.dataDir! };
}

/** `npm run lab -- <args>`, as the operator types it. */
function labCommand(args: string[], where: Where): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...envOf(where) };
  if (!where.url) delete env.MGPULAB_DATABASE_URL;
  const child = spawn("npm", ["run", "--silent", "lab", "--", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function newNotebook(client: TestClient, title: string): Promise<{ notebookId: string; cellId: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  assert.ok(opened.ok && opened.notebook);
  return { notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id };
}

/** A workshop with a participant in and one waiting, a broadcast, and a prediction on the notebook: rows the lab keeps, written as the lab writes them. */
async function seedWorkshopAndPrediction(where: Where, notebookId: string): Promise<void> {
  await withLabDatabase(where, async (prisma) => {
    const notebook = await prisma.notebook.findUniqueOrThrow({ where: { id: notebookId } });
    const workshop = await prisma.workshop.create({
      data: { title: "Backup class", facilitatorId: notebook.ownerId, joinCode: "BKP42", scenarioIds: ["dp-basics"], capacity: 1, startsAt: new Date(Date.now() - 60_000) },
    });
    await prisma.user.create({ data: { name: "In", email: "in@participants.invalid", role: "participant", workshopId: workshop.id } });
    await prisma.user.create({ data: { name: "Waits", email: "waits@participants.invalid", role: "participant", workshopId: workshop.id, waitingSince: new Date() } });
    await prisma.workshopBroadcast.create({ data: { workshopId: workshop.id, message: "Try 4 devices", preset: { scenarioId: "dp-basics", values: { devices: 4 } } } });
    await prisma.prediction.create({ data: { notebookId, questionId: "dp-basics/split", userId: notebook.ownerId, question: "How is a batch of 64 split on 4 devices?", choice: "16 each" } });
  });
}

/** Stored output text of an execution, in order. */
function outputText(execution: LabSnapshot["runs"][number]["executions"][number]): string {
  return execution.outputs.map((output) => (output.payload as { text?: string }).text ?? "").join("");
}

function assertSameExceptBusy(restored: LabSnapshot, source: LabSnapshot, busyNotebookId: string): void {
  assert.deepEqual(restored.predictions, source.predictions, "every prediction");
  assert.deepEqual(restored.workshops, source.workshops, "every workshop, its participants and broadcasts");
  assert.ok(source.workshops.length === 1 && source.predictions.length === 1, "the seeded rows are there");
  const quiet = (snapshot: LabSnapshot) => snapshot.notebooks.filter((notebook) => notebook.id !== busyNotebookId);
  assert.deepEqual(quiet(restored), quiet(source), "every notebook not written to during the backup, whole");
  const busy = (snapshot: LabSnapshot) => {
    const notebook = snapshot.notebooks.find((each) => each.id === busyNotebookId)!;
    return { id: notebook.id, title: notebook.title, ownerId: notebook.ownerId, createdAt: notebook.createdAt, cells: notebook.cells.map(({ id, position, kind, source: text }) => ({ id, position, kind, text })) };
  };
  assert.deepEqual(busy(restored), busy(source), "the busy notebook's cells");
  const quietRuns = (snapshot: LabSnapshot) => snapshot.runs.filter((run) => run.notebookId !== busyNotebookId);
  assert.deepEqual(quietRuns(restored), quietRuns(source), "every run not written to during the backup, with its executions and outputs");
  assert.ok(quietRuns(source).length >= 1 && quietRuns(source)[0]!.executions.length === 2);
}

function busyExecution(snapshot: LabSnapshot, notebookId: string): LabSnapshot["runs"][number]["executions"][number] {
  const runs = snapshot.runs.filter((run) => run.notebookId === notebookId);
  assert.equal(runs.length, 1);
  assert.equal(runs[0]!.executions.length, 1);
  return runs[0]!.executions[0]!;
}

forEachDatabase((kind: DatabaseKind) => {
  describe("lab backup and restore", () => {
    let source: { where: Where; remove(): Promise<void> };
    let dataDir: string;
    let server: LabServer | null = null;
    let client: TestClient;
    const backups = mkdtempSync(path.join(tmpdir(), "mgpulab-backups-"));
    const backupFile = path.join(backups, kind.provider === "sqlite" ? "lab-backup.db" : "lab-backup.dump");
    let busy: { notebookId: string; cellId: string };
    let quiet: { notebookId: string; cellId: string };
    let sourceAfter: LabSnapshot;

    before(async () => {
      source = await kind.fresh();
      dataDir = source.where.dataDir ?? mkdtempSync(path.join(tmpdir(), "mgpulab-backup-lab-"));
      server = await LabServer.start({ ...envOf(source.where), MGPULAB_DATA_DIR: dataDir });
      client = await connectClient(server.url);
    });
    after(async () => {
      client?.close();
      await server?.stop();
      rmSync(backups, { recursive: true, force: true });
      if (!source.where.dataDir) rmSync(dataDir, { recursive: true, force: true });
      await source.remove();
    });

    it("backs up while a cell prints; restored into a fresh place, every notebook, run, prediction and workshop is the source's", LIMIT, async () => {
      quiet = await newNotebook(client, "Quiet notebook");
      const second = "c2";
      assert.ok((await client.send({ op: "insert-cell", notebookId: quiet.notebookId, index: 1, cell: { id: second, kind: "code", source: "" } })).ok);
      assert.deepEqual(await client.run(quiet.notebookId, { [quiet.cellId]: "print('quiet one')", [second]: "x = 6 * 7\nprint(x)" }), { ok: true });
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === second);
      assert.deepEqual(await client.send({ op: "shutdown", notebookId: quiet.notebookId }), { ok: true });
      await seedWorkshopAndPrediction(source.where, quiet.notebookId);
      // The operator's metrics read the same database: the workshop is counted, and statements are timed on this provider.
      const metrics = await (await fetch(`${server!.url}/metrics`)).text();
      assert.match(metrics, /^mgpulab_workshops_active 1$/m);
      assert.match(metrics, /^mgpulab_workshop_participants\{state="admitted"\} 1$/m);
      assert.match(metrics, /^mgpulab_workshop_participants\{state="waiting"\} 1$/m);
      const statements = new RegExp(`^mgpulab_db_statement_duration_seconds_count\\{provider="${kind.provider}",operation="(query|execute)"\\} (\\d+)$`, "gm");
      assert.deepEqual([...metrics.matchAll(statements)].map((match) => [match[1], Number(match[2]) > 0]), [["query", true], ["execute", true]]);

      busy = await newNotebook(client, "Busy notebook");
      assert.deepEqual(await client.run(busy.notebookId, { [busy.cellId]: PRINTS }), { ok: true });
      await client.waitFor(() => shownText(client.events, busy.cellId).split("\n").length > 40);

      const made = await labCommand(["backup", backupFile], source.where);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /^backed up .* to .*lab-backup/);
      assert.equal(statSync(backupFile).mode & 0o777, 0o600, "a backup holds password hashes: its owner's only");
      const linesAtBackup = shownText(client.events, busy.cellId).split("\n").length;
      // The lab went on writing after the copy was made.
      await client.waitFor(() => shownText(client.events, busy.cellId).split("\n").length > linesAtBackup + 20);
      assert.deepEqual(await client.send({ op: "interrupt", notebookId: busy.notebookId }), { ok: true });
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === busy.cellId);
      // The execution's end is written after viewers hear of it: read the source once it is.
      sourceAfter = await pollUntilAsync("the interrupted execution stored", async () => {
        const snapshot = await labSnapshot(source.where);
        return busyExecution(snapshot, busy.notebookId).status !== "running" && snapshot;
      }, 30_000, 200);

      const fresh = await kind.fresh();
      try {
        const restored = await labCommand(["restore", backupFile], fresh.where);
        assert.equal(restored.code, 0, restored.stderr);
        assert.match(restored.stdout, /^restored .* \(2 notebooks, 2 runs, 1 workshops\) into /);
        const copy = await labSnapshot(fresh.where);
        assertSameExceptBusy(copy, sourceAfter, busy.notebookId);
        // The busy cell: the copy is the moment of the backup, running, with the output stored until then.
        const atBackup = busyExecution(copy, busy.notebookId);
        const later = busyExecution(sourceAfter, busy.notebookId);
        assert.equal(atBackup.id, later.id);
        assert.equal(atBackup.status, "running");
        assert.equal(later.status, "interrupted");
        assert.ok(atBackup.outputs.length > 0, "output stored before the backup is in it");
        assert.deepEqual(atBackup.outputs, later.outputs.slice(0, atBackup.outputs.length), "the copy's output is exactly the start of the source's");
        const text = outputText(atBackup);
        assert.match(text, /^line 0\nline 1\n/);
        assert.ok(text.length < outputText(later).length, "output stored after the backup is not in it");
        assert.match(text, /line \d+\n$/, "whole lines: a copy of one moment, not of a half-written batch");
      } finally {
        await fresh.remove();
      }
    });

    it("refuses to restore over the data of a lab that runs, and changes nothing", LIMIT, async () => {
      const before = await labSnapshot(source.where);
      const refused = await labCommand(["restore", backupFile], source.where);
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, /is in use — a lab runs on it/);
      assert.match(refused.stderr, kind.provider === "sqlite" ? /pid \d+ \(.*server\/main\.ts/ : /a lab server connected from/);
      assert.deepEqual(await labSnapshot(source.where), before);
      if (kind.provider === "sqlite") assert.deepEqual(readdirSync(source.where.dataDir!).filter((name) => name.includes("before-restore")), []);
    });

    it("restores over a stopped lab's data, and the lab starts on what was restored", LIMIT, async () => {
      client.close();
      await server!.stop();
      server = null;
      const replaced = await labSnapshot(source.where);
      const restored = await labCommand(["restore", backupFile], source.where);
      assert.equal(restored.code, 0, restored.stderr);
      if (kind.provider === "sqlite") {
        const aside = readdirSync(source.where.dataDir!).filter((name) => /^lab\.db\.before-restore-/.test(name) && !/-(wal|shm)$/.test(name));
        assert.equal(aside.length, 1, "the replaced database is kept");
        assert.match(restored.stdout, /kept as /);
        // What was there before the restore is all in the file kept aside.
        const keptWhere = keptAsideWhere(source.where.dataDir!, aside[0]!);
        try {
          assert.deepEqual(await labSnapshot(keptWhere), replaced);
        } finally {
          rmSync(keptWhere.dataDir!, { recursive: true, force: true });
        }
      }
      server = await LabServer.start({ ...envOf(source.where), MGPULAB_DATA_DIR: dataDir });
      client = await connectClient(server.url);
      const listed = await client.sendLab({ op: "list-notebooks" });
      assert.ok(listed.ok && listed.notebooks);
      assert.deepEqual(listed.notebooks.map((notebook) => notebook.title).sort(), ["Busy notebook", "Quiet notebook"]);
      const opened = await client.send({ op: "open", notebookId: quiet.notebookId });
      assert.ok(opened.ok && opened.notebook);
      assert.match(JSON.stringify(opened.notebook.cells.map((cell) => cell.outputs)), /quiet one[\s\S]*42/);
    });

    it("refuses a file that is not a lab backup, and a backup of the other kind of database, saying why", LIMIT, async () => {
      const junk = path.join(backups, "notes.txt");
      writeFileSync(junk, "not a backup\n");
      const refused = await labCommand(["restore", junk], source.where);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /is not a lab backup/);
      const other = kind.provider === "sqlite" ? { url: "postgresql://lab@127.0.0.1:1/none" } : { dataDir: mkdtempSync(path.join(tmpdir(), "mgpulab-other-")) };
      const crossed = await labCommand(["restore", backupFile], other);
      assert.equal(crossed.code, 1);
      assert.match(crossed.stderr, kind.provider === "sqlite" ? /a backup of a SQLite lab, and this lab is on PostgreSQL/ : /a backup of a lab on PostgreSQL, and this lab uses SQLite/);
      if (other.dataDir) {
        assert.equal(existsSync(path.join(other.dataDir, "lab.db")), false, "nothing was written");
        rmSync(other.dataDir, { recursive: true, force: true });
      }
      const twice = await labCommand(["backup", backupFile], source.where);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /already exists: a backup never overwrites a file/);
    });
  });
});

/** A data directory whose lab.db is the file restore kept aside (copied, so the original stays as it was). */
function keptAsideWhere(dataDir: string, name: string): Where {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-aside-"));
  copyFileSync(path.join(dataDir, name), path.join(dir, "lab.db"));
  for (const suffix of ["-wal", "-shm"]) if (existsSync(path.join(dataDir, `${name}${suffix}`))) copyFileSync(path.join(dataDir, `${name}${suffix}`), path.join(dir, `lab.db${suffix}`));
  return { dataDir: dir };
}
