/**
 * The socket edge without Next: a real HTTP server with socket.io and the
 * notebook hub over real kernels, on a free loopback port.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { io as connect, type Socket } from "socket.io-client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { handleExecutionRoutes } from "../../server/http/execution-routes";
import { localHost } from "../../server/kernel/kernel-host";
import { openLab, type Lab } from "../../server/lab";
import type { LabHosts } from "../../server/hosts/lab-hosts";
import type { KernelLimits } from "../../server/notebook/kernel-registry";
import { createLogger } from "../../server/logger";
import type { ClientToServerEvents, CommandAck, LabAck, NotebookEvent, ServerToClientEvents } from "../../server/core/protocol/socket-api";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { labNames, type LabNames } from "../../server/http/request-guard";
import { attachNotebookSocket, roomOf, socketServerOptions } from "../../server/socket/notebook-socket";

export type ClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export class SocketHarness {
  private constructor(
    readonly url: string,
    readonly lab: Lab,
    private readonly dataDir: string,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
    private readonly http: HttpServer,
  ) {}

  /** A server on a fresh database in a temp directory (or `dataDir`, to reopen one). */
  /** `hosts`: the lab's hosts with their agents (the hosts page, kernel specs); without it, kernels run on local PTYs. */
  static async start(options: { dataDir?: string; hangAfterMs?: number; kernelLimits?: KernelLimits; hosts?: (labId: string) => LabHosts } = {}): Promise<SocketHarness> {
    const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "mgpulab-socket-"));
    let routes: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;
    // The chart routes (as server/main.ts mounts them), so tests read metrics the way the browser does.
    const http = createServer((req, res) => {
      if (routes?.(req, res)) return;
      if (!req.url?.startsWith("/socket.io/")) {
        res.statusCode = 404;
        res.end();
      }
    });
    // The same handshake guard as server/main.ts: only the lab's names and origins.
    let names: LabNames = labNames("127.0.0.1", 0);
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, socketServerOptions(() => names, () => undefined));
    const lab = await openLab({
      dataDir,
      ...(options.hosts ? { hosts: options.hosts } : { host: () => localHost() }),
      hangAfterMs: options.hangAfterMs,
      kernelLimits: options.kernelLimits,
      broadcast: (notebookId, event, seq) => io.to(roomOf(notebookId)).emit("notebook:event", notebookId, event, seq),
    });
    attachNotebookSocket(io, lab.hub, createLogger("silent"), lab.scenarios, lab.hosts);
    routes = (req, res) => handleExecutionRoutes(req, res, { prisma: lab.db.prisma, onError: () => undefined });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    names = labNames("127.0.0.1", port);
    return new SocketHarness(`http://127.0.0.1:${port}`, lab, dataDir, io, http);
  }

  /** Creates a notebook (as the notebook list does) and returns its id. */
  async createNotebook(title = "test notebook"): Promise<string> {
    return (await this.lab.catalog.create(title)).id;
  }

  client(): Promise<TestClient> {
    return connectClient(this.url);
  }

  /** Stops everything; the database directory is removed unless `keepData`. */
  async close({ keepData = false } = {}): Promise<void> {
    await this.lab.close();
    await new Promise<void>((resolve) => {
      void this.io.close(() => resolve());
    });
    this.http.closeAllConnections();
    if (!keepData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A socket.io client of any lab server (this harness or a real server process). */
export async function connectClient(url: string): Promise<TestClient> {
  const socket: ClientSocket = connect(url, { transports: ["websocket"], forceNew: true, reconnection: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return new TestClient(socket);
}

export class TestClient {
  readonly events: NotebookEvent[] = [];
  readonly seqs: number[] = [];
  private readonly waiters: Array<{ test: (event: NotebookEvent) => boolean; wake: (event: NotebookEvent) => void }> = [];

  constructor(readonly socket: ClientSocket) {
    socket.on("notebook:event", (_notebookId, event, seq) => {
      this.events.push(event);
      this.seqs.push(seq);
      for (const waiter of this.waiters.splice(0)) {
        if (waiter.test(event)) waiter.wake(event);
        else this.waiters.push(waiter);
      }
    });
  }

  send(command: unknown): Promise<CommandAck> {
    return this.socket.timeout(30_000).emitWithAck("notebook:command", command);
  }

  sendLab(command: unknown): Promise<LabAck> {
    return this.socket.timeout(30_000).emitWithAck("lab:command", command);
  }

  /**
   * Types `sources` into their cells and runs them, as the notebook page does:
   * each source saved (set-source), then one execute with the ids and the
   * hashes of the text run. Resolves with the execute's acknowledgement.
   */
  async run(notebookId: string, sources: Record<string, string>): Promise<CommandAck> {
    for (const [cellId, source] of Object.entries(sources)) {
      const saved = await this.send({ op: "set-source", notebookId, cellId, source });
      if (!saved.ok) return saved;
    }
    const sourceHashes = Object.fromEntries(Object.entries(sources).map(([cellId, source]) => [cellId, sourceHash(source)]));
    return this.send({ op: "execute", notebookId, cellIds: Object.keys(sources), sourceHashes });
  }

  waitFor(test: (event: NotebookEvent) => boolean): Promise<NotebookEvent> {
    const seen = this.events.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((wake) => this.waiters.push({ test, wake }));
  }

  close(): void {
    this.socket.disconnect();
  }
}
