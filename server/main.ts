/**
 * The lab's server: Next.js pages, .ipynb file routes and socket.io on one
 * HTTP port, wired to the lab's services. Wiring only; behaviour lives in the
 * modules it joins.
 */
import { createServer } from "node:http";
import path from "node:path";
import next from "next";
import { Server } from "socket.io";
import { kernelLimitsOf, readConfig, withIdleFromHostsFile } from "./config";
import { executionChartSvg, handleExecutionRoutes } from "./http/execution-routes";
import { handleNotebookFiles } from "./http/notebook-files";
import { refuse } from "./http/json-reply";
import { checkHttpRequest, labNames } from "./http/request-guard";
import { applySecurityHeaders } from "./http/security-headers";
import { chooseInterpreter } from "./kernel/python-interpreter";
import { LabHosts, labHostSpecs } from "./hosts/lab-hosts";
import { HostsConfigError, loadHostsConfig } from "./hosts/host-config";
import { openLab } from "./lab";
import { createLogger } from "./logger";
import { LOCAL_USER } from "./persistence";
import type { ClientToServerEvents, ServerToClientEvents } from "./core/protocol/socket-api";
import { attachNotebookSocket, roomOf, socketServerOptions } from "./socket/notebook-socket";

async function main(): Promise<void> {
  const log = createLogger();
  const config = readConfig();
  const python = chooseInterpreter(config.python);
  log.info({ python: python.executable, why: python.reason }, "local kernel host");
  const logTo = (level: "info" | "warning" | "error", message: string): void => log[level === "warning" ? "warn" : level](message);
  // A bad hosts file stops the start with every bad field named (HostsConfigError).
  const hostsConfig = loadHostsConfig({ dataDir: config.dataDir ?? path.resolve("data") });
  log.info({ hostsFile: hostsConfig.file, hosts: hostsConfig.hosts.map((host) => `${host.id} (${host.kind})`), defaultHost: hostsConfig.defaultHost }, "kernel hosts");

  const app = next({ dev: config.dev, dir: path.resolve(__dirname, ".."), hostname: config.host, port: config.port });
  let io: Server<ClientToServerEvents, ServerToClientEvents> | null = null;
  const lab = await openLab({
    dataDir: config.dataDir,
    hosts: (labId) =>
      new LabHosts(
        labHostSpecs(hostsConfig.hosts, { python: python.executable, leaseSeconds: config.kernelLeaseSeconds, runtimeDir: config.agentRuntimeDir }),
        hostsConfig.defaultHost,
        labId,
        logTo,
      ),
    healthIntervalMs: hostsConfig.healthIntervalSeconds * 1000,
    hangAfterMs: config.hangSeconds * 1000,
    kernelLimits: kernelLimitsOf(hostsConfig.file === null ? config : withIdleFromHostsFile(config, hostsConfig.idle)),
    broadcast: (notebookId, event, seq) => io?.to(roomOf(notebookId)).emit("notebook:event", notebookId, event, seq),
    log: logTo,
  });
  log.info({ database: lab.db.file, interruptedRuns: lab.interruptedRuns, resumedRuns: lab.resumedRuns }, "database ready");
  await app.prepare();
  const handle = app.getRequestHandler();

  // The port is known once listening (PORT=0 picks one); nothing is served before.
  let names = labNames(config.host, config.port, config.allowedOrigins);
  const httpServer = createServer((req, res) => {
    applySecurityHeaders(req, res, { dev: config.dev });
    const verdict = checkHttpRequest(req.method, req.headers, names);
    if (!verdict.ok) {
      log.warn({ method: req.method, url: req.url, host: req.headers.host, origin: req.headers.origin, reason: verdict.reason }, "request refused");
      refuse(res, verdict);
      return;
    }
    const onError = (err: unknown) => log.error({ err }, `${req.method ?? ""} ${req.url ?? ""} failed`);
    const chartOf = (executionId: string) => executionChartSvg(lab.db.prisma, executionId);
    if (handleNotebookFiles(req, res, { notebooks: lab.catalog.repos.notebooks, predictions: lab.catalog.repos.predictions, ownerId: LOCAL_USER.id, onError, chartOf, templates: lab.scenarios, hostIds: lab.hosts?.ids() })) return;
    if (handleExecutionRoutes(req, res, { prisma: lab.db.prisma, onError })) return;
    void handle(req, res);
  });
  io = new Server<ClientToServerEvents, ServerToClientEvents>(
    httpServer,
    socketServerOptions(() => names, (reason) => log.warn({ reason }, "socket handshake refused")),
  );
  attachNotebookSocket(io, lab.hub, log, lab.scenarios, lab.hosts);

  await new Promise<void>((resolve) => httpServer.listen(config.port, config.host, resolve));
  const address = httpServer.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  names = labNames(config.host, port, config.allowedOrigins);
  log.info({ url: `http://${config.host}:${port}` }, "listening");

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: saving; kernels stay with their host agents for their lease");
    await lab.close({ keepKernels: true });
    await new Promise<void>((resolve) => {
      void io?.close(() => resolve());
    });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  // A bad hosts file is the operator's to fix: its fields, not a stack trace.
  const said = error instanceof HostsConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`multi-gpu-lab failed to start: ${said}\n`);
  process.exit(1);
});
