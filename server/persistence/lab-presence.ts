/**
 * "A lab runs on this PostgreSQL database", told in the database itself, so
 * that `npm run lab -- restore` (server/backup) can refuse to overwrite a
 * running lab's data even from another machine. Each lab server holds a
 * shared session-level advisory lock on a connection of its own for as long
 * as it runs; restore takes the same lock exclusively, which it gets only
 * when no lab holds it — and while it holds it, a lab that starts waits
 * for the restore to end instead of opening a half-replaced database.
 *
 * A lock lives with its connection: a lab that dies (even by SIGKILL) lets
 * go at once, and one whose connection drops takes it again on reconnect.
 * SQLite needs none of this: its file is on this machine, and the processes
 * that have it open are the answer (server/backup/open-files.ts).
 */
import pg from "pg";
import type { DatabaseTarget } from "./database-target";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

/** The advisory lock's two keys: "mGPL" and 1 (the two-key form keeps clear of single bigint keys others use). */
export const PRESENCE_LOCK_KEYS = [0x6d47504c, 1] as const;

const RECONNECT_DELAYS_MS = [1_000, 2_000, 5_000, 10_000];

export interface LabPresence {
  /** Lets go (the lab server stops). */
  release(): Promise<void>;
}


/** Marks the database as used by a running lab; waits (saying so) while a restore holds it. A no-op on SQLite. */
export async function holdLabPresence(target: DatabaseTarget, log?: Log): Promise<LabPresence> {
  if (target.provider === "sqlite") return { release: async () => undefined };
  const presence = new PostgresPresence(target.pool, log);
  await presence.hold();
  return presence;
}

/** Connection settings for a session outside Prisma's pool (the lock's, restore's): one connection, no statement timeout to cut a wait short. */
export function sessionConfig(pool: pg.PoolConfig, applicationName: string): pg.ClientConfig {
  return { host: pool.host, port: pool.port, user: pool.user, password: pool.password, database: pool.database, ssl: pool.ssl, connectionTimeoutMillis: pool.connectionTimeoutMillis, application_name: applicationName };
}

class PostgresPresence implements LabPresence {
  private client: pg.Client | null = null;
  private released = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: pg.PoolConfig,
    private readonly log?: Log,
  ) {}

  async hold(): Promise<void> {
    const client = new pg.Client(sessionConfig(this.pool, "mgpulab presence"));
    client.on("error", (error) => this.lost(client, error.message));
    client.on("end", () => this.lost(client, "the connection ended"));
    try {
      await client.connect();
      const [classId, objectId] = PRESENCE_LOCK_KEYS;
      const tried = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock_shared($1, $2) AS held", [classId, objectId]);
      if (!tried.rows[0]?.held) {
        this.log?.("warning", "the database is being restored (npm run lab -- restore): waiting for the restore to finish");
        await client.query("SELECT pg_advisory_lock_shared($1, $2)", [classId, objectId]);
        this.log?.("info", "the restore finished: going on");
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.released) return void (await client.end().catch(() => undefined));
    this.client = client;
    this.attempt = 0;
  }

  /** The held connection failed: take the lock again on a new one. */
  private lost(client: pg.Client, reason: string): void {
    if (this.client !== client || this.released) return;
    this.client = null;
    this.retryLater(reason);
  }

  private retryLater(reason: string): void {
    if (this.released || this.retry) return;
    const delay = RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)]!;
    this.attempt += 1;
    this.log?.("warning", `the lab's presence lock on PostgreSQL is not held (${reason}); taking it again in ${delay / 1000} s`);
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.released) this.hold().catch((error: unknown) => this.retryLater(errorMessage(error)));
    }, delay);
    this.retry.unref();
  }

  async release(): Promise<void> {
    this.released = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
