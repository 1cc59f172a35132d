/**
 * The several-servers lab the chaos run attacks, on loopback, from the
 * tests' own pieces: a throwaway PostgreSQL (helpers/postgres.ts), Redis
 * and nginx (helpers/cluster-services.ts, nginx configured by
 * scripts/nginx-conf.ts), and two real lab servers (server/main.ts through
 * helpers/lab-server.ts) whose kernels belong to the local host agent. Each
 * part can be killed and brought back where it was (same port, same data).
 *
 * Every process it starts carries `marker` in its environment, so the run
 * can tell at the end whether anything it started (a kernel, the agent,
 * PostgreSQL's backends) is still there.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { LabServer } from "../helpers/lab-server";
import { freePort, NginxBalancer, RedisService } from "../helpers/cluster-services";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { descendants, signal } from "../helpers/daemons";

/** A server start can take minutes on a loaded machine (Next prepares its pages): a generous bound, said when hit. */
const SERVER_START_LIMIT_MS = 240_000;

export interface ServerSlot {
  /** 1-based, as the report names it. */
  number: number;
  port: number;
  server: LabServer;
  /** Every server id this slot has had (one per start): a driver row names one of them. */
  serverIds: string[];
  /** The log lines of every earlier incarnation (the current one's are `server.logs`). */
  pastLogs: string[];
}

export class ChaosCluster {
  private constructor(
    readonly dataDir: string,
    readonly postgres: TestPostgres,
    readonly databaseUrl: string,
    readonly redis: RedisService,
    readonly nginx: NginxBalancer,
    readonly servers: [ServerSlot, ServerSlot],
    private readonly env: Record<string, string>,
    /** The local admin's session (signed in through the first server's token URL). */
    readonly adminCookie: string,
  ) {}

  static async start(say: (line: string) => void): Promise<ChaosCluster> {
    const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-chaos-"));
    // Its immediate (crash) restart keeps what it confirmed, as a production PostgreSQL does.
    const postgres = await startPostgres({ crashSafe: true });
    try {
      const databaseUrl = await postgres.createDatabase("chaos");
      say(`PostgreSQL ${new URL(databaseUrl).host} (pid ${postgres.pid()})`);
      const redis = await RedisService.start();
      say(`Redis ${redis.url} (pid ${redis.pid})`);
      const balancerPort = await freePort();
      const env = {
        MGPULAB_DATA_DIR: dataDir,
        MGPULAB_DATABASE_URL: databaseUrl,
        MGPULAB_REDIS_URL: redis.url,
        MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents"),
        MGPULAB_ALLOWED_ORIGINS: `http://127.0.0.1:${balancerPort}`,
        // A dead server's notebooks move after this: short, so a run sees many takeovers.
        MGPULAB_DRIVER_LEASE_SECONDS: "5",
        // The agent keeps kernels this long with no server connected: one server is always up, so this only bounds the end.
        MGPULAB_KERNEL_LEASE_SECONDS: "20",
        // 20 participants' kernels may all end up on one server.
        MGPULAB_MAX_KERNELS: "60",
        // Never: a kernel ended by idle shutdown would be a fault the schedule did not make.
        MGPULAB_KERNEL_IDLE_MINUTES: "0",
        // A step importing torch on a loaded machine may be silent for minutes: a hang report would be noise here.
        MGPULAB_HANG_SECONDS: "900",
        // The class signs in and joins from one address.
        MGPULAB_LOGIN_RATE_LIMIT: "1000/60",
        MGPULAB_JOIN_RATE_LIMIT: "1000/60",
      };
      const slots: ServerSlot[] = [];
      for (const number of [1, 2]) {
        const port = await freePort();
        // One at a time: the first applies the migrations and writes the shared auth secret.
        const server = await LabServer.start({ ...env, PORT: String(port) }, SERVER_START_LIMIT_MS);
        slots.push({ number, port, server, serverIds: [serverIdOf(server)], pastLogs: [] });
        say(`lab server ${number} on 127.0.0.1:${port} (pid ${server.pid})`);
      }
      const nginx = await NginxBalancer.start(balancerPort, slots.map((slot) => slot.port));
      say(`nginx ${nginx.url} (pid ${nginx.pid}) in front of both`);
      const adminCookie = slots[0]!.server.cookie;
      if (adminCookie === null) throw new Error("the first lab server printed no sign-in URL");
      return new ChaosCluster(dataDir, postgres, databaseUrl, redis, nginx, [slots[0]!, slots[1]!], env, adminCookie);
    } catch (error) {
      await postgres.stop();
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Where the class connects: nginx. */
  get publicUrl(): string {
    return this.nginx.url;
  }

  /** Stops a lab server with `sig` and starts it again on its port; resolves once it listens. */
  async killServer(slot: ServerSlot, sig: "SIGKILL" | "SIGTERM"): Promise<void> {
    await slot.server.stop(sig);
    slot.pastLogs.push(...slot.server.logs);
    slot.server = await LabServer.start({ ...this.env, PORT: String(slot.port) }, SERVER_START_LIMIT_MS, { signIn: false });
    slot.serverIds.push(serverIdOf(slot.server));
  }

  /**
   * Cuts a server's link to the host agent: SIGKILL of the link's local end
   * (the server's child running the agent's bootstrap, which has handed the
   * lab's sockets to the agent and lives as long as the link: its end ends the
   * link). Returns how many link processes there were.
   */
  dropAgentLink(slot: ServerSlot): number {
    const relays = descendants(slot.server.pid).filter((pid) => commandLine(pid).includes("MGPULAB_AGENT_BOOT"));
    signal(relays, "SIGKILL");
    return relays.length;
  }

  /** Every log line of a server slot, earlier incarnations first. */
  logsOf(slot: ServerSlot): string[] {
    return [...slot.pastLogs, ...slot.server.logs];
  }

  /** Writes every server's log (all incarnations) and the host agent's log into `dir`, for a run to be read afterwards. */
  saveLogs(dir: string): void {
    mkdirSync(dir, { recursive: true });
    for (const slot of this.servers) writeFileSync(path.join(dir, `lab-server-${slot.number}.log`), `${this.logsOf(slot).join("\n")}\n`);
    const agents = path.join(this.dataDir, "agents");
    for (const file of existsSync(agents) ? readdirSync(agents, { recursive: true, encoding: "utf8" }) : []) {
      if (file.endsWith("agent.log")) copyFileSync(path.join(agents, file), path.join(dir, "agent.log"));
    }
  }

  /** Stops everything it started, in reverse order of need; the data folder goes. */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((slot) => slot.server.stop("SIGTERM")));
    await this.nginx.stop();
    await this.redis.stop();
    await this.postgres.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The id a server of several logs when it listens. */
function serverIdOf(server: LabServer): string {
  const line = server.logs.find((entry) => entry.includes('"listening"'));
  const serverId = line ? (JSON.parse(line) as { serverId?: string }).serverId : undefined;
  if (!serverId) throw new Error("a lab server of several did not say its id when it listened");
  return serverId;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return ""; // ended meanwhile
  }
}
