/**
 * Backup and restore of a lab on PostgreSQL (MGPULAB_DATABASE_URL), with
 * PostgreSQL's own programs (Debian's postgresql-client).
 *
 * Backup is `pg_dump` of the lab's schema in its custom format: one
 * snapshot (a repeatable-read transaction), so a consistent copy while the
 * lab serves; without owners or grants, so it restores as any user that
 * owns the target's schema.
 *
 * Restore refuses while a lab server holds its presence lock on the target
 * (persistence/lab-presence.ts) and holds that lock itself meanwhile, so a
 * lab starting then waits. It replaces the schema in ONE transaction
 * (`pg_restore` writes the SQL, `psql --single-transaction` runs it after
 * dropping the old schema): it all happens, or — on any error — nothing
 * does.
 */
import { spawn, spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import pg from "pg";
import type { DatabaseTarget } from "../persistence/database-target";
import { PRESENCE_LOCK_KEYS, sessionConfig } from "../persistence/lab-presence";
import { BackupError, sizeText, writeNewFile } from "./backup-file";

type PostgresTarget = Extract<DatabaseTarget, { provider: "postgresql" }>;

/** The lab's schema (the URL may not name another: database-target.ts). */
const SCHEMA = "public";
/** How long the restore waits for another session's lock on the old tables before it gives up (and changes nothing). */
const RESTORE_LOCK_TIMEOUT = "10s";

export async function backupPostgres(target: PostgresTarget, file: string): Promise<string> {
  const began = performance.now();
  let tables = 0;
  await writeNewFile(file, async (partial) => {
    await run("pg_dump", ["--format=custom", `--schema=${SCHEMA}`, "--no-owner", "--no-privileges", `--file=${partial}`], target);
    tables = tableCount(listArchive(partial, "the new backup"));
  });
  return `backed up ${target.description} to ${file}: ${tables} tables, ${sizeText(statSync(file).size)}, in ${((performance.now() - began) / 1000).toFixed(1)} s`;
}

export async function restorePostgres(file: string, target: PostgresTarget): Promise<string> {
  const contents = listArchive(file, file);
  if (!/ TABLE DATA \S+ _prisma_migrations( |$)/m.test(contents)) throw new BackupError(`${file} is a pg_dump archive but not of a lab (it has no _prisma_migrations table)`);
  const createsSchema = new RegExp(`^\\d+; \\d+ \\d+ SCHEMA - ${SCHEMA}( |$)`, "m").test(contents);
  const session = new pg.Client(sessionConfig(target.pool, "mgpulab restore"));
  await session.connect();
  try {
    const [classId, objectId] = PRESENCE_LOCK_KEYS;
    const locked = await session.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS locked", [classId, objectId]);
    if (!locked.rows[0]?.locked) throw new BackupError(`${target.description} is in use — a lab runs on it (stop every lab server on it first): ${await labSessions(session)}`);
    const preamble = [`SET lock_timeout = '${RESTORE_LOCK_TIMEOUT}';`, `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE;`, ...(createsSchema ? [] : [`CREATE SCHEMA ${SCHEMA};`]), ""].join("\n");
    await restoreInOneTransaction(file, preamble, target);
    const counts = await session.query<{ notebooks: string; runs: string; workshops: string }>(
      `SELECT (SELECT count(*) FROM ${SCHEMA}."Notebook") AS notebooks, (SELECT count(*) FROM ${SCHEMA}."KernelRun") AS runs, (SELECT count(*) FROM ${SCHEMA}."Workshop") AS workshops`,
    );
    const row = counts.rows[0]!;
    return `restored ${file} (${row.notebooks} notebooks, ${row.runs} runs, ${row.workshops} workshops) into ${target.description}`;
  } finally {
    // Ending the session releases the lock.
    await session.end().catch(() => undefined);
  }
}

/** `pg_restore` turns the archive into SQL; `psql` runs it after `preamble`, all in one transaction. */
async function restoreInOneTransaction(file: string, preamble: string, target: PostgresTarget): Promise<void> {
  const env = libpqEnvironment(target, "mgpulab restore");
  const writer = spawn(program("pg_restore"), ["--no-owner", "--no-privileges", "--file=-", file], { env, stdio: ["ignore", "pipe", "pipe"] });
  const runner = spawn(program("psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-f", "-"], { env, stdio: ["pipe", "pipe", "pipe"] });
  // psql stopping at an error closes its input under pg_restore: its failure is the one to tell.
  runner.stdin.on("error", () => undefined);
  runner.stdin.write(preamble);
  writer.stdout.pipe(runner.stdin);
  const [written, ran] = await Promise.all([finished(writer, "pg_restore"), finished(runner, "psql")]);
  if (ran.code !== 0) throw new BackupError(`the restore failed and was rolled back, nothing was changed: ${ran.stderr.trim()}`);
  if (written.code !== 0) throw new BackupError(`pg_restore could not read ${file}; nothing was changed: ${written.stderr.trim()}`);
}

/** Who holds the presence lock: each lab server's session, where it connects from and since when. */
async function labSessions(session: pg.Client): Promise<string> {
  const [classId, objectId] = PRESENCE_LOCK_KEYS;
  const holders = await session.query<{ pid: number; client: string | null; since: Date }>(
    `SELECT a.pid, host(a.client_addr) AS client, a.backend_start AS since FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2 AND l.granted AND l.pid <> pg_backend_pid()`,
    [classId, objectId],
  );
  if (holders.rows.length === 0) return "another restore holds the database";
  return holders.rows.map((row) => `a lab server connected from ${row.client ?? "a local socket"} since ${row.since.toISOString()} (backend pid ${row.pid})`).join("; ");
}

/** The archive's table of contents (`pg_restore --list`): checks that it is a readable archive. */
function listArchive(file: string, name: string): string {
  const listed = spawnSync(program("pg_restore"), ["--list", file], { encoding: "utf8" });
  if (listed.error) throw new BackupError(missingProgram("pg_restore", listed.error));
  if (listed.status !== 0) throw new BackupError(`${name} is not a readable pg_dump archive: ${listed.stderr.trim()}`);
  return listed.stdout;
}

function tableCount(contents: string): number {
  return contents.split("\n").filter((line) => /^\d+; \d+ \d+ TABLE \S+ \S+/.test(line)).length;
}

async function run(name: string, args: string[], target: PostgresTarget): Promise<void> {
  const child = spawn(program(name), args, { env: libpqEnvironment(target, "mgpulab backup"), stdio: ["ignore", "ignore", "pipe"] });
  const outcome = await finished(child, name);
  if (outcome.code !== 0) throw new BackupError(`${name} failed: ${outcome.stderr.trim()}`);
}

function finished(child: ReturnType<typeof spawn>, name: string): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new BackupError(missingProgram(name, error))));
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

/** The connection as libpq's environment: the password never on a command line (where `ps` shows it). */
function libpqEnvironment(target: PostgresTarget, applicationName: string): NodeJS.ProcessEnv {
  const { pool } = target;
  const env: NodeJS.ProcessEnv = { ...process.env, PGHOST: String(pool.host), PGPORT: String(pool.port), PGDATABASE: String(pool.database), PGAPPNAME: applicationName, PGCONNECT_TIMEOUT: "10" };
  if (pool.user) env.PGUSER = pool.user;
  if (typeof pool.password === "string") env.PGPASSWORD = pool.password;
  if (target.sslMode) env.PGSSLMODE = target.sslMode;
  return env;
}

/** PostgreSQL's programs from PATH (Debian's pg_wrapper picks the newest client), or MGPULAB_PG_BIN's. */
function program(name: string): string {
  const dir = process.env.MGPULAB_PG_BIN;
  return dir ? `${dir.replace(/\/$/, "")}/${name}` : name;
}

function missingProgram(name: string, error: Error): string {
  return `${name} could not run (${error.message}): install Debian's postgresql-client, whose version must be at least the server's (or set MGPULAB_PG_BIN to the directory of a newer one)`;
}
