/**
 * A throwaway PostgreSQL from Debian's packages: a cluster initdb'd in a temp
 * directory, serving 127.0.0.1 on a free port, removed when stopped. Tests
 * (one database each, from `createDatabase`), the transaction benchmark and
 * scripts/db-migrate-diff.ts (its shadow database) start one.
 *
 * PostgreSQL refuses to run as root, and the suite runs as root: the cluster
 * then belongs to the `postgres` system user the Debian package creates, and
 * initdb and the server run as that user (setpriv execs in place, so the
 * server's pid is the child's and a signal reaches it directly).
 *
 * MGPULAB_TEST_POSTGRES_URL (a superuser's URL of a running server) is used
 * instead of starting one, so a machine with its own PostgreSQL can share it.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { exited, freePort, startDaemon } from "./daemons";
import { ensureDebianPackages } from "./debian-packages";

const DEBIAN_PACKAGE = "postgresql";
const SUPERUSER = "postgres";

export interface TestPostgres {
  /** The superuser's URL of the database `database` (default "postgres"). */
  url(database?: string): string;
  /** A new, empty database; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server and removes its cluster (a shared server from the environment is left running). */
  stop(): Promise<void>;
  /**
   * Stops the server and starts it again on the same data and port (what an
   * operator's restart or a crash does to the lab's connections): "fast"
   * ends sessions and shuts down cleanly, "immediate" quits at once and
   * recovers from the WAL on start. Resolves once it accepts connections
   * again. Not on a shared server from the environment.
   */
  restart(mode: "fast" | "immediate"): Promise<void>;
  /** The server's process id (the postmaster); null on a shared server. */
  pid(): number | null;
}

export interface StartOptions {
  /**
   * Default false: fsync off, as a test needs no crash safety and the suite's
   * disks are slow. The benchmark asks for true: commits wait for the WAL to
   * reach the disk, as in production.
   */
  durable?: boolean;
  /**
   * Without `durable`: still wait for each commit's WAL to reach the OS
   * (synchronous_commit on, fsync off), so a crash of PostgreSQL itself
   * (an immediate shutdown, a kill) loses nothing it confirmed, as in
   * production; only the machine crashing would. For tests that crash it.
   */
  crashSafe?: boolean;
  /** Default 200: the benchmark's pools and a test's several clients fit. */
  maxConnections?: number;
}

/** The directory of initdb and postgres, newest major version first; null when none is installed. */
export function postgresBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, "bin");
    if (existsSync(path.join(bin, "initdb")) && existsSync(path.join(bin, "postgres"))) return bin;
  }
  return null;
}

/** null when a PostgreSQL can be started here (installing the Debian package when root may); else why not. */
export function postgresUnavailable(): string | null {
  if (process.env.MGPULAB_TEST_POSTGRES_URL) return null;
  if (postgresBinDir()) return null;
  const missing = ensureDebianPackages([DEBIAN_PACKAGE]);
  if (missing) return `PostgreSQL's server binaries (initdb, postgres) are not installed: ${missing}`;
  return postgresBinDir() ? null : `PostgreSQL's server binaries (initdb, postgres) are not under /usr/lib/postgresql/*/bin: install the Debian package ${DEBIAN_PACKAGE}`;
}

export async function startPostgres(options: StartOptions = {}): Promise<TestPostgres> {
  const shared = process.env.MGPULAB_TEST_POSTGRES_URL;
  if (shared) return onServer(shared, async () => {});
  const bin = postgresBinDir();
  if (!bin) throw new Error(`PostgreSQL's server binaries (initdb, postgres) are not installed: install the Debian package ${DEBIAN_PACKAGE} (apt-get install ${DEBIAN_PACKAGE})`);

  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-pg-"));
  const dataDir = path.join(dir, "data");
  const socketDir = path.join(dir, "socket");
  mkdirSync(socketDir);
  const asUser = runAsPostgresUser([dir, socketDir]);
  const initdb = [...asUser, path.join(bin, "initdb"), "-D", dataDir, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"];
  const init = spawnSync(initdb[0]!, initdb.slice(1), { encoding: "utf8" });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
  }
  const port = await freePort();
  const settings = [
    `listen_addresses=127.0.0.1`,
    `port=${port}`,
    `unix_socket_directories=${socketDir}`,
    `max_connections=${options.maxConnections ?? 200}`,
    ...(options.durable ? [] : ["fsync=off", "full_page_writes=off", ...(options.crashSafe ? [] : ["synchronous_commit=off"])]),
  ];
  const server = [...asUser, path.join(bin, "postgres"), "-D", dataDir, ...settings.flatMap((setting) => ["-c", setting])];
  const ready = /database system is ready to accept connections/;
  let child: ChildProcess;
  try {
    child = (await startDaemon(server, ready)).child;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // A test process that dies without stopping the server must not leave it running.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  return onServer(
    `postgresql://${SUPERUSER}@127.0.0.1:${port}/postgres`,
    async () => {
      process.removeListener("exit", killOnExit);
      // SIGINT: "fast" shutdown, which ends the sessions a leaked client still holds.
      child.kill("SIGINT");
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
    {
      restart: async (mode) => {
        // SIGINT: fast shutdown (sessions ended, a checkpoint); SIGQUIT: immediate (no checkpoint: crash recovery at start).
        child.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
        await exited(child);
        child = (await startDaemon(server, ready, { timeoutMs: 120_000 })).child;
      },
      pid: () => child.pid ?? null,
    },
  );
}

/** The argv prefix that runs a program as the postgres user (empty when not root), after handing it `paths`. */
function runAsPostgresUser(paths: string[]): string[] {
  if (process.getuid?.() !== 0) return [];
  const user = spawnSync("id", ["-u", SUPERUSER], { encoding: "utf8" });
  const group = spawnSync("id", ["-g", SUPERUSER], { encoding: "utf8" });
  if (user.status !== 0) throw new Error(`PostgreSQL will not run as root, and there is no "${SUPERUSER}" user to run it as (the Debian package ${DEBIAN_PACKAGE} creates it)`);
  for (const entry of paths) chownSync(entry, Number(user.stdout), Number(group.stdout));
  return ["setpriv", `--reuid=${SUPERUSER}`, `--regid=${SUPERUSER}`, "--init-groups"];
}

interface OwnServer {
  restart: (mode: "fast" | "immediate") => Promise<void>;
  pid: () => number | null;
}

function onServer(adminUrl: string, stop: () => Promise<void>, own: OwnServer | null = null): TestPostgres {
  const url = (database = "postgres") => {
    const parsed = new URL(adminUrl);
    parsed.pathname = `/${database}`;
    return parsed.toString();
  };
  const created: string[] = [];
  const admin = async <T>(body: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      return await body(client);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    createDatabase: async (prefix = "mgpulab_test") => {
      const name = `${prefix}_${randomBytes(6).toString("hex")}`;
      await admin((client) => client.query(`CREATE DATABASE "${name}"`));
      created.push(name);
      return url(name);
    },
    restart: async (mode) => {
      if (own === null) throw new Error("a shared PostgreSQL (MGPULAB_TEST_POSTGRES_URL) is not restarted by the tests");
      await own.restart(mode);
    },
    pid: () => own?.pid() ?? null,
    stop: async () => {
      // On a shared server, drop what this process created; a private one goes whole.
      if (process.env.MGPULAB_TEST_POSTGRES_URL) {
        await admin(async (client) => {
          for (const name of created.splice(0)) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        });
      }
      await stop();
    },
  };
}
