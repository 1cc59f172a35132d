/**
 * The lab's services, opened once: the database (migrated, runs cut off by a
 * previous stop marked interrupted), the notebook catalog, the hub of
 * open notebooks and the idle shutdown of their kernels. Shared by the
 * server entry point and the tests.
 */
import type { KernelLauncher } from "./kernel/kernel-process";
import type { KernelInfo } from "./core/protocol/notebook-model";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { LabHosts } from "./hosts/lab-hosts";
import { HolderNaming } from "./hosts/holder-names";
import { openDatabase, repositoriesOf, type Database, type LabRepositories, type RunRepository } from "./persistence";
import type { StatementObserver } from "./persistence/timed-adapter";
import { resolveDatabaseTarget } from "./persistence/database-target";
import { holdLabPresence } from "./persistence/lab-presence";
import { singleHost } from "./notebook/kernel-hosts";
import { DatabaseCatalog } from "./notebook/database-catalog";
import { KernelCuller } from "./notebook/kernel-culler";
import { NotebookHub, type NotebookHubOptions } from "./notebook/notebook-hub";
import { ScenarioCatalog } from "./scenarios/scenario-catalog";
import path from "node:path";
import { openAccess, type AuthSettings, type LabAccess } from "./auth";
import { loadAuthSecret } from "./auth/auth-secret";
import { Workshops } from "./workshops/workshops";
import { WorkshopNotebooks } from "./workshops/workshop-notebooks";
import { CommandError } from "./errors";
import { LocalDriver, LocalDrivers, type NotebookDrivers } from "./cluster/notebook-drivers";
import { LabCluster } from "./cluster/lab-cluster";
import { ServerLink } from "./cluster/server-link";
import { errorMessage } from "./core/errors";

export interface LabOptions extends Omit<NotebookHubOptions, "catalog" | "hosts"> {
  /** Where lab.db lives (default MGPULAB_DATA_DIR or ./data). */
  dataDir?: string;
  /** A PostgreSQL URL instead of lab.db (default MGPULAB_DATABASE_URL). */
  databaseUrl?: string;
  /** Where kernels run when no `hosts` are given (tests of the kernel path: a PTY per kernel). */
  host?: () => KernelLauncher;
  /** The configured hosts and their agents (named by this lab's id); kernels they run outlive this server. */
  hosts?: (labId: string) => LabHosts;
  /** How often hosts are checked (health, GPU use); default a minute. */
  healthIntervalMs?: number;
  log?: NotebookHubOptions["log"];
  /** Sessions, sign-in and rate limits; the cookie secret defaults to MGPULAB_AUTH_SECRET or one kept in the data directory. */
  auth?: Partial<Omit<AuthSettings, "onParticipantJoined">>;
  /** One of several lab servers on one database (cluster/lab-cluster.ts); unset: the only one. */
  cluster?: ClusterSettings;
  /** Told how long each database statement took (the operator's metrics, server/metrics). */
  onDatabaseStatement?: StatementObserver;
}

export interface ClusterSettings {
  /** The Redis the servers reach each other through. */
  redisUrl: string;
  /** How long a server's claim on a notebook lasts unless renewed (a dead server's kernels move after it). */
  leaseMs: number;
  /** This server's id (default: random). */
  serverId?: string;
  /** This server's connections in a notebook's room (the socket edge knows them). */
  localViewers?: (notebookId: string) => string[];
  /** Tells a notebook's viewers on every server to re-open it (the socket edge emits it). */
  resync?: (notebookId: string) => void;
}

/** Defaults for a lab whose options say nothing of auth (tests): the limits from the config's defaults. */
const DEFAULT_AUTH: Omit<AuthSettings, "onParticipantJoined" | "secret"> = {
  origins: () => [],
  sessionSeconds: 7 * 24 * 3600,
  loginRateLimit: { max: 10, windowSeconds: 60 },
  joinRateLimit: { max: 120, windowSeconds: 60 },
  secureCookies: false,
};

export interface Lab {
  /** This installation's id (names its host agents, and its channels on a shared Redis). */
  labId: string;
  db: Database;
  /** Every database access of the lab's services goes through these. */
  repositories: LabRepositories;
  catalog: DatabaseCatalog;
  hub: NotebookHub;
  scenarios: ScenarioCatalog;
  /** Accounts, sessions and the access gate. */
  access: LabAccess;
  workshops: Workshops;
  /** Where each notebook's commands run: here, or on the server that drives it. */
  drivers: NotebookDrivers;
  /** With several servers: this one's part (its id, leases and link); null when it is the only one. */
  cluster: LabCluster | null;
  /** Runs that a previous server process left "running", now marked interrupted. */
  interruptedRuns: number;
  /** Runs whose kernels outlived the previous server and were taken over. */
  resumedRuns: number;
  hosts: LabHosts | null;
  /** `keepKernels`: kernels that live with a host agent go on (the next server takes them over); otherwise every kernel is stopped. */
  close(options?: { keepKernels?: boolean }): Promise<void>;
}

export async function openLab(options: LabOptions): Promise<Lab> {
  // On PostgreSQL the lab marks the database as in use (restore refuses to overwrite it, and a start waits for a restore).
  const presence = await holdLabPresence(resolveDatabaseTarget({ dataDir: options.dataDir, url: options.databaseUrl }), options.log);
  const db = await openDatabase({ dataDir: options.dataDir, url: options.databaseUrl, onStatement: options.onDatabaseStatement }).catch(async (error: unknown) => {
    await presence.release();
    throw error;
  });
  const repositories = repositoriesOf(db);
  await repositories.users.ensure();
  const runs = repositories.runs;
  // This installation's id, made on first start: it names the lab's host agents.
  const labId = await repositories.settings.ensure("labId", () => randomUUID().replace(/-/g, ""));
  const hosts = options.hosts ? options.hosts(labId) : null;
  // With several servers, another may be running kernels now: runs are interrupted or taken over per notebook, once its driver's lease lapsed (the sweep).
  const interrupted = options.cluster ? [] : await runs.interruptRunningRuns(undefined, { keepAgentRuns: hosts !== null });
  const kernelHosts = hosts ?? (options.host ? singleHost(options.host()) : null);
  if (!kernelHosts) throw new Error("openLab needs hosts or a host");
  // With several servers, this one's id: it names its driver leases, and its kernels' writes are fenced by them.
  const serverId = options.cluster ? (options.cluster.serverId ?? randomUUID().replace(/-/g, "").slice(0, 16)) : null;
  const catalog = new DatabaseCatalog(repositories, (message) => options.log?.("error", message), kernelHosts.defaultHost, serverId);
  const scenarios = new ScenarioCatalog();
  const dataDir = options.dataDir ?? (process.env.MGPULAB_DATA_DIR || path.resolve("data"));
  const secret = options.auth?.secret ?? loadAuthSecret(dataDir, process.env.MGPULAB_AUTH_SECRET);
  // Made once the drivers exist (an ended workshop's kernels shut down through them); notebook events reach its live views after their writes commit.
  let workshops: Workshops | null = null;
  // With several servers: made right after the hub, whose notebooks it drives (claimOn).
  let cluster: LabCluster | null = null;
  const hub = new NotebookHub({
    ...options,
    claim: options.cluster ? (notebookId) => claimOn(cluster, notebookId) : undefined,
    hosts: kernelHosts,
    catalog,
    templates: scenarios,
    broadcast: (notebookId, event, seq) => {
      options.broadcast(notebookId, event, seq);
      workshops?.live.notebookEvent(notebookId, event);
    },
  });
  if (hosts) {
    hub.kernels.measureGpusWith((placement) => hosts.gpuUtilization(placement.hostId, placement.agentKernelId));
    hosts.startHealthChecks(options.healthIntervalMs ?? 60_000);
  }
  const local = new LocalDriver(hub, new WorkshopNotebooks(repositories.workshops, hub), options.log);
  let resumed = 0;
  if (options.cluster && serverId) {
    const link = await ServerLink.open({ redisUrl: options.cluster.redisUrl, labId, serverId, log: options.log });
    cluster = new LabCluster({
      hub,
      local,
      leases: repositories.driverLeases({ serverId, leaseMs: options.cluster.leaseMs }),
      link,
      takeOver: async (notebookId) => {
        await runs.interruptRunningRuns(DRIVER_GONE, { keepAgentRuns: hosts !== null, notebookId });
        if (hosts) resumed += await takeOverKernels(runs, hosts, hub, options.log, notebookId);
      },
      localViewers: options.cluster.localViewers ?? (() => []),
      resync: options.cluster.resync ?? (() => undefined),
      log: options.log,
    });
  }
  const drivers: NotebookDrivers = cluster ?? new LocalDrivers(local);
  const labWorkshops = new Workshops({ stored: repositories.workshops, roster: repositories.roster, hub, scenarios, kernels: drivers, log: options.log });
  workshops = labWorkshops;
  labWorkshops.startClock();
  const access = openAccess(repositories, {
    ...DEFAULT_AUTH,
    ...options.auth,
    secret,
    onParticipantJoined: ({ workshopId }) => labWorkshops.arrived(workshopId),
  });
  if (cluster) {
    await cluster.sweep();
    cluster.start();
  } else if (hosts) {
    resumed = await takeOverKernels(runs, hosts, hub, options.log);
  }
  // Who holds or waits for a GPU is named for each notebook as its owner may see it (hosts/holder-names.ts).
  const naming = new HolderNaming({ holders: () => drivers.agentHolders(), owners: repositories.access, gate: access.gate });
  hosts?.nameKernelsWith((_ids, notebookId) => naming.forNotebook(notebookId));
  const culler = new KernelCuller(hub.kernels, { log: options.log });
  culler.start();
  return {
    labId,
    db,
    repositories,
    catalog,
    hub,
    scenarios,
    access,
    workshops: labWorkshops,
    drivers,
    cluster,
    interruptedRuns: interrupted.length,
    get resumedRuns() {
      return resumed;
    },
    hosts,
    close: async ({ keepKernels = false } = {}) => {
      culler.stop();
      await labWorkshops.close();
      hub.stopOpening();
      if (keepKernels) {
        await hub.detachAll();
        await hosts?.detachAll();
      } else {
        await hub.shutdownAll();
        await hosts?.shutdownAll();
      }
      // Leases go last: another server may take a notebook over only once nothing here drives it.
      await drivers.close();
      scenarios.close();
      await db.close();
      await presence.release();
    },
  };
}

/**
 * The hub's claim hook with several servers. The cluster is made right after
 * the hub, before anything can open a notebook (the workshop clock and the
 * socket edge start later); should a notebook open earlier, it is refused
 * as a server still starting, never driven without its lease.
 */
function claimOn(cluster: LabCluster | null, notebookId: string): Promise<void> {
  if (!cluster) return Promise.reject(new CommandError("unavailable", "this lab server is still starting: try again in a moment"));
  return cluster.claim(notebookId);
}

/** Why a run on a server's own PTY ended when another server took its notebook over. */
const DRIVER_GONE = "its lab server stopped";

/**
 * Runs a previous server left running on a host agent: each notebook is
 * opened and its kernel taken over from the stored read position; a run
 * whose kernel is gone (lease expired, host unreachable or no longer
 * configured) is ended as interrupted, saying why.
 */
async function takeOverKernels(runs: RunRepository, hosts: LabHosts, hub: NotebookHub, log: LabOptions["log"], notebookId?: string): Promise<number> {
  let resumed = 0;
  for (const run of await runs.detachedRuns(notebookId)) {
    const began = performance.now();
    const agent = hosts.agent(run.hostId);
    let reason: string | null = null;
    if (!agent) reason = `host "${run.hostId}" is no longer configured`;
    else {
      try {
        // Asked, not read from the link's hello (which lists only the kernels of the link's opening: the server
        // that stopped may have started this one since); asked before the notebook is opened, so a run ended
        // here is stored before the notebook is loaded, and its viewers see that ending.
        if (!(await agent.hasKernel(run.agentKernelId))) {
          reason = `the kernel ended while no lab server was connected (host ${run.hostId}'s agent no longer has it: its lease expired or the host restarted)`;
        } else if (await hub.resume({ ...run, info: kernelInfoOf(run.kernelInfo) })) {
          resumed += 1;
          log?.("info", `took over the kernel of notebook ${run.notebookId} on host ${run.hostId} from output ${run.agentSeq} in ${Math.round(performance.now() - began)} ms`);
        } else {
          reason = "the kernel ended while the lab server restarted";
        }
      } catch (error) {
        reason = `host ${run.hostId} was unreachable when the lab server restarted: ${errorMessage(error)}`;
      }
    }
    if (reason) {
      log?.("warning", `run ${run.id} of notebook ${run.notebookId}: ${reason}`);
      await runs.interruptRun(run.id, reason);
    }
  }
  return resumed;
}

/** What a kernel said of itself when it started, as stored with its run (KernelInfo). */
const storedKernelInfo = z.object({
  pid: z.number().int(),
  hostname: z.string(),
  python: z.string(),
  executable: z.string(),
  torch: z.string().nullable(),
  deviceMode: z.string(),
  host: z.object({ id: z.string(), label: z.string() }).optional(),
  gpus: z.array(z.string()).optional(),
});

function kernelInfoOf(stored: unknown): KernelInfo {
  const parsed = storedKernelInfo.safeParse(stored);
  return parsed.success ? parsed.data : { pid: -1, hostname: "unknown", python: "unknown", executable: "unknown", torch: null, deviceMode: "unknown (not stored)" };
}
