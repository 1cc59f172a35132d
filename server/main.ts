/**
 * The lab's server: Next.js pages and socket.io on one HTTP port, wired to
 * the notebook hub. Wiring only; behaviour lives in the modules it joins.
 */
import { createServer } from "node:http";
import path from "node:path";
import next from "next";
import { Server } from "socket.io";
import { readConfig } from "./config";
import { localHost } from "./kernel/kernel-host";
import { createLogger } from "./logger";
import { NotebookHub } from "./notebook/notebook-hub";
import type { ClientToServerEvents, ServerToClientEvents } from "./protocol/socket-api";
import { SOCKET_SERVER_OPTIONS, attachNotebookSocket, roomOf } from "./socket/notebook-socket";

async function main(): Promise<void> {
  const log = createLogger();
  const config = readConfig();
  const host = localHost(config.python);
  log.info({ python: host.describe() }, "local kernel host");

  const app = next({ dev: config.dev, dir: path.resolve(__dirname, ".."), hostname: config.host, port: config.port });
  await app.prepare();
  const handle = app.getRequestHandler();

  const httpServer = createServer((req, res) => void handle(req, res));
  const io = new Server<ClientToServerEvents, ServerToClientEvents>(httpServer, SOCKET_SERVER_OPTIONS);
  const hub = new NotebookHub({
    host: () => host,
    broadcast: (notebookId, event, seq) => io.to(roomOf(notebookId)).emit("notebook:event", notebookId, event, seq),
    log: (level, message) => log[level === "warning" ? "warn" : level](message),
  });
  attachNotebookSocket(io, hub, log);

  await new Promise<void>((resolve) => httpServer.listen(config.port, config.host, resolve));
  const address = httpServer.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  log.info({ url: `http://${config.host}:${port}` }, "listening");

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: stopping kernels");
    await hub.shutdownAll();
    await new Promise<void>((resolve) => {
      void io.close(() => resolve());
    });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  process.stderr.write(`multi-gpu-lab failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
