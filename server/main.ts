/**
 * The lab's server: Next.js pages, the lab's HTTP routes and socket.io on
 * one HTTP port, wired to the lab's services. Wiring only; behaviour lives
 * in the modules it joins (every request: http/lab-edge.ts; every socket
 * event: socket/notebook-socket.ts; who may do what: auth/).
 */
import { createServer } from "node:http";
import path from "node:path";
import next from "next";
import { Server } from "socket.io";
import { isLoopbackHost, kernelLimitsOf, readConfig, withIdleFromHostsFile, type ServerConfig } from "./config";
import { createLabEdge } from "./http/lab-edge";
import { labNames } from "./http/request-guard";
import { chooseInterpreter } from "./kernel/python-interpreter";
import { LabHosts, labHostSpecs, type LabHostSpec } from "./hosts/lab-hosts";
import { HostsConfigError, loadHostsConfig, type HostConfig } from "./hosts/host-config";
import { localTokenUrl, mintLocalToken } from "./auth/local-token";
import { openLab, type Lab } from "./lab";
import { createLogger, logTo, type Log } from "./logger";
import type { ClientToServerEvents, ServerToClientEvents } from "./core/protocol/socket-api";
import { attachNotebookSocket, localViewersOf, roomOf, socketServerOptions } from "./socket/notebook-socket";
import { batchedBroadcast } from "./socket/notebook-events";
import { openSocketAdapter, type ClusterSocketAdapter } from "./cluster/socket-adapter";
import { RedisUnreachable } from "./cluster/redis-connect";
import { LabMetrics } from "./metrics/lab-metrics";
import { workshopCounts } from "./metrics/workshop-counts";
import { errorDetail, errorMessage } from "./core/errors";

/** A start the operator must fix first: said in one line, no stack trace. */
class StartRefused extends Error {}

async function main(): Promise<void> {
  const logger = createLogger();
  const log = logTo(logger);
  const config = readConfig();
  const python = chooseInterpreter(config.python);
  log("info", "local kernel host", { python: python.executable, why: python.reason });
  // A hosts file that cannot be read as a whole stops the start with every bad field named (HostsConfigError);
  // a bad host entry is left out, said here and on /hosts, and the rest of the lab serves.
  const dataDir = config.dataDir ?? path.resolve("data");
  const hostsConfig = loadHostsConfig({ dataDir });
  log("info", "kernel hosts", { hostsFile: hostsConfig.file, hosts: hostsConfig.hosts.map((host) => `${host.id} (${host.kind})`), defaultHost: hostsConfig.defaultHost });
  for (const problem of hostsConfig.problems) log("warning", `host ${problem.id} is left out: its entry in the hosts file fails its check`, { host: problem.id, problems: problem.errors });
  const hostSpecs = (hosts: typeof hostsConfig.hosts) => labHostSpecs(hosts, { python: python.executable, leaseSeconds: config.kernelLeaseSeconds, runtimeDir: config.agentRuntimeDir });

  // The kernel cap: MGPULAB_MAX_KERNELS, or sized from this machine's memory and cores now.
  const kernelLimits = kernelLimitsOf(hostsConfig.file === null ? config : withIdleFromHostsFile(config, hostsConfig.idle));
  log("info", "kernel capacity", { maxKernels: kernelLimits.maxKernels, why: kernelLimits.capacity?.why });

  const app = next({ dev: config.dev, dir: path.resolve(__dirname, ".."), hostname: config.host, port: config.port });
  let io: Server<ClientToServerEvents, ServerToClientEvents> | null = null;
  // The port is known once listening (PORT=0 picks one); nothing is served before.
  let names = labNames(config.host, config.port, config.allowedOrigins);
  const loopback = isLoopbackHost(config.host);
  // The operator's Prometheus metrics (/metrics): told of events as they happen, reading the lab's state at each scrape.
  const metrics = new LabMetrics({ log });
  const sendEvents = batchedBroadcast((notebookId, firstSeq, events) => io?.to(roomOf(notebookId)).emit("notebook:events", notebookId, firstSeq, events));
  const lab = await openLab({
    dataDir: config.dataDir,
    hosts: (labId) => new LabHosts(hostSpecs(hostsConfig.hosts), hostsConfig.defaultHost, labId, log, hostsConfig.problems),
    healthIntervalMs: hostsConfig.healthIntervalSeconds * 1000,
    hangAfterMs: config.hangSeconds * 1000,
    settleMs: config.settleMs,
    kernelLimits,
    broadcast: (notebookId, event, seq) => {
      sendEvents(notebookId, event, seq);
      metrics.notebookEvent(notebookId, event);
    },
    onDatabaseStatement: metrics.databaseStatement,
    log: log,
    // Several lab servers on one database: they meet in Redis (README "Several lab servers").
    cluster: config.redisUrl
      ? {
          redisUrl: config.redisUrl,
          leaseMs: config.driverLeaseSeconds * 1000,
          localViewers: (notebookId) => (io ? localViewersOf(io, notebookId) : []),
          resync: (notebookId) => void io?.to(roomOf(notebookId)).emit("lab:resync", notebookId),
        }
      : undefined,
    auth: {
      origins: () => [...names.origins],
      sessionSeconds: Math.round(config.sessionHours * 3600),
      loginRateLimit: config.loginRateLimit,
      joinRateLimit: config.joinRateLimit,
      secureCookies: config.allowedOrigins.some((origin) => origin.startsWith("https:")),
    },
  });
  log("info", "database ready", { database: lab.db.file, interruptedRuns: lab.interruptedRuns, resumedRuns: lab.resumedRuns });
  await ensureAdmin(lab, config, loopback, log);
  await app.prepare();
  const handlePage = app.getRequestHandler();

  const httpServer = createServer(
    createLabEdge({
      lab,
      names: () => names,
      dev: config.dev,
      loopback,
      pages: (req, res) => void handlePage(req, res),
      hostIds: lab.hosts?.ids(),
      onError: (err, what) => log("error", `${what} failed`, { err }),
      onRefused: (req, reason) => log("warning", "request refused", { method: req.method, url: req.url, host: req.headers.host, origin: req.headers.origin, reason }),
      metrics,
      metricsToken: config.metricsToken ?? null,
    }),
  );
  const socketAdapter: ClusterSocketAdapter | null = config.redisUrl
    ? await openSocketAdapter(config.redisUrl, lab.labId, () => void io?.local.emit("lab:resync", null), log)
    : null;
  io = new Server<ClientToServerEvents, ServerToClientEvents>(httpServer, {
    ...socketServerOptions(() => names, (reason) => log("warning", "socket handshake refused", { reason })),
    ...(socketAdapter ? { adapter: socketAdapter.adapter } : {}),
  });
  metrics.readFrom({
    kernels: lab.hub.kernels,
    hosts: lab.hosts ?? undefined,
    workshops: () => workshopCounts(lab.repositories.workshops),
    sockets: () => io?.of("/").sockets.size ?? 0,
  });
  attachNotebookSocket(io, { hub: lab.hub, drivers: lab.drivers, scenarios: lab.scenarios, hosts: lab.hosts, access: lab.access, workshops: lab.workshops, repositories: lab.repositories, log });

  await new Promise<void>((resolve) => httpServer.listen(config.port, config.host, resolve));
  const address = httpServer.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  names = labNames(config.host, port, config.allowedOrigins);
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  // Jupyter's convention on loopback: a URL with a one-time token signs this browser in as the local admin.
  const signInUrl = loopback ? localTokenUrl(url, await mintLocalToken(lab.repositories.verifications)) : undefined;
  log("info", "listening", { url, signInUrl, serverId: lab.cluster?.serverId });
  if (signInUrl) process.stderr.write(`\n  Open the lab (this link signs you in once):\n    ${signInUrl}\n\n`);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log("info", "shutting down: saving; kernels stay with their host agents for their lease", { signal });
    await lab.close({ keepKernels: true });
    await new Promise<void>((resolve) => {
      void io?.close(() => resolve());
    });
    await socketAdapter?.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // `kill -HUP <pid>`: the hosts file is read again, checked whole, and its settings reach the running agents.
  process.on("SIGHUP", () => void reloadHosts(lab, hostsConfig.file, dataDir, hostSpecs, log));
}

/** SIGHUP: the edited hosts file takes effect without a restart; one that cannot be read leaves the hosts as they were. */
async function reloadHosts(lab: Lab, file: string | null, dataDir: string, hostSpecs: (hosts: HostConfig[]) => LabHostSpec[], log: Log): Promise<void> {
  if (!lab.hosts) return;
  try {
    const reloaded = loadHostsConfig({ file, dataDir });
    const report = await lab.hosts.reload(hostSpecs(reloaded.hosts), reloaded.defaultHost, reloaded.problems);
    for (const problem of report.problems) log("warning", `hosts file reloaded: host ${problem.id}'s entry fails its check`, { host: problem.id, problems: problem.errors });
    log("info", "hosts file reloaded", { hostsFile: reloaded.file, added: report.added, removed: report.removed, keptForKernels: report.keptForKernels, reconfigured: report.reconfigured });
  } catch (error) {
    const said = error instanceof HostsConfigError ? error.message : errorDetail(error);
    log("error", "hosts file not reloaded: the hosts stay as they were", { error: said });
  }
}

/**
 * The first admin from MGPULAB_ADMIN_EMAIL/_PASSWORD when none exists; and a
 * lab others can reach refuses to start without one (there would be no way
 * in but an open door).
 */
async function ensureAdmin(lab: Lab, config: ServerConfig, loopback: boolean, log: Log): Promise<void> {
  const accounts = lab.access.accounts;
  if (config.firstAdmin && !(await accounts.hasAdminWithPassword())) {
    const admin = await accounts.create({ ...config.firstAdmin, role: "admin" }).catch((error: unknown) => {
      throw new StartRefused(`MGPULAB_ADMIN_EMAIL/MGPULAB_ADMIN_PASSWORD: ${errorMessage(error)}`);
    });
    log("info", "first admin created", { email: admin.email });
  }
  if (!loopback && !(await accounts.hasAdminWithPassword())) {
    throw new StartRefused(
      `this lab would listen on ${config.host}, where anyone who reaches it could use it, and it has no admin yet. ` +
        "Create one first: `npm run lab -- create-admin --email you@example.com` (asks for the password), " +
        "or start once with MGPULAB_ADMIN_EMAIL and MGPULAB_ADMIN_PASSWORD set.",
    );
  }
}

main().catch((error: unknown) => {
  // A bad hosts file or a refused start is the operator's to fix: its words, not a stack trace.
  const said = error instanceof HostsConfigError || error instanceof StartRefused || error instanceof RedisUnreachable ? error.message : errorDetail(error);
  process.stderr.write(`multi-gpu-lab failed to start: ${said}\n`);
  process.exit(1);
});
