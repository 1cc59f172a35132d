/**
 * The socket edge without Next: a real HTTP server with socket.io and the
 * notebook hub over real kernels, on a free loopback port.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { io as connect, type Socket } from "socket.io-client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLabEdge } from "../../server/http/lab-edge";
import { localTokenUrl, mintLocalToken } from "../../server/auth/local-token";
import { LOCAL_USER } from "../../server/persistence";
import { rememberSession, sessionCookie, signInWithToken } from "./lab-session";
import { localHost } from "../../server/kernel/kernel-host";
import { openLab, type Lab } from "../../server/lab";
import type { LabHosts } from "../../server/hosts/lab-hosts";
import type { KernelLimits } from "../../server/notebook/kernel-registry";
import { createLogger, logTo } from "../../server/logger";
import type { ClientToServerEvents, NotebookEvent, ServerToClientEvents } from "../../server/core/protocol/socket-api";
import { isNotebookOp, notebookAnswerOf, type NotebookAnswer, type NotebookOp, type NotebookSend } from "../../server/core/protocol/ops-notebook";
import { isLabOp, labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { labNames, type LabNames } from "../../server/http/request-guard";
import { attachNotebookSocket, roomOf, socketServerOptions } from "../../server/socket/notebook-socket";
import { batchedBroadcast } from "../../server/socket/notebook-events";

export type ClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export class SocketHarness {
  private constructor(
    readonly url: string,
    readonly lab: Lab,
    private readonly dataDir: string,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
    private readonly http: HttpServer,
    /** The local admin's session cookie: `client()` connects with it. */
    readonly cookie: string,
  ) {}

  /** A server on a fresh database in a temp directory (or `dataDir`, to reopen one; or the PostgreSQL database `databaseUrl`). */
  /** `hosts`: the lab's hosts with their agents (the hosts page, kernel specs); without it, kernels run on local PTYs. */
  /** `auth`: sign-in settings (rate limits) for tests of them. */
  static async start(
    options: {
      dataDir?: string;
      /** A PostgreSQL database instead of the data directory's lab.db. */
      databaseUrl?: string;
      hangAfterMs?: number;
      /** How long a run's progress may wait for company (durability-gate.ts). */
      settleMs?: number;
      kernelLimits?: KernelLimits;
      hosts?: (labId: string) => LabHosts;
      auth?: Parameters<typeof openLab>[0]["auth"];
    } = {},
  ): Promise<SocketHarness> {
    const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "mgpulab-socket-"));
    // The same handshake guard as server/main.ts: only the lab's names and origins.
    let names: LabNames = labNames("127.0.0.1", 0);
    let edge: ReturnType<typeof createLabEdge> | null = null;
    // The lab's real HTTP edge (sessions, sign-in, the API routes), without Next: a page is a 404 here.
    const http = createServer((req, res) => edge?.(req, res));
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, socketServerOptions(() => names, () => undefined));
    const lab = await openLab({
      dataDir,
      databaseUrl: options.databaseUrl,
      ...(options.hosts ? { hosts: options.hosts } : { host: () => localHost() }),
      hangAfterMs: options.hangAfterMs,
      settleMs: options.settleMs,
      kernelLimits: options.kernelLimits,
      broadcast: batchedBroadcast((notebookId, firstSeq, events) => io.to(roomOf(notebookId)).emit("notebook:events", notebookId, firstSeq, events)),
      auth: { origins: () => [...names.origins], ...options.auth },
    });
    const log = logTo(createLogger("silent"));
    attachNotebookSocket(io, { hub: lab.hub, drivers: lab.drivers, scenarios: lab.scenarios, hosts: lab.hosts, access: lab.access, workshops: lab.workshops, repositories: lab.repositories, log });
    edge = createLabEdge({
      lab,
      names: () => names,
      dev: false,
      loopback: true,
      pages: (_req, res) => {
        res.statusCode = 404;
        res.end();
      },
      hostIds: lab.hosts?.ids(),
      onError: () => undefined,
      onRefused: () => undefined,
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    names = labNames("127.0.0.1", port);
    const url = `http://127.0.0.1:${port}`;
    const cookie = await signInWithToken(localTokenUrl(url, await mintLocalToken(lab.repositories.verifications)));
    rememberSession(url, cookie);
    return new SocketHarness(url, lab, dataDir, io, http, cookie);
  }

  /** Creates a notebook of the local admin (as the notebook list does) and returns its id. */
  async createNotebook(title = "test notebook", ownerId: string = LOCAL_USER.id): Promise<string> {
    return (await this.lab.catalog.create(ownerId, title)).id;
  }

  /** A client signed in as the local admin, or with `cookie` (another user's session). */
  client(cookie?: string): Promise<TestClient> {
    return connectClient(this.url, cookie);
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

/** A socket.io client of any lab server (this harness or a real server process), signed in with `cookie` or the lab's remembered session. */
export async function connectClient(url: string, cookie: string | undefined = sessionCookie(url)): Promise<TestClient> {
  const socket: ClientSocket = connect(url, { transports: ["websocket"], forceNew: true, reconnection: false, extraHeaders: cookie ? { cookie } : {} });
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
    socket.on("notebook:events", (_notebookId, firstSeq, events) => {
      events.forEach((event, index) => {
        this.events.push(event);
        this.seqs.push(firstSeq + index);
        for (const waiter of this.waiters.splice(0)) {
          if (waiter.test(event)) waiter.wake(event);
          else this.waiters.push(waiter);
        }
      });
    });
  }

  /** A notebook op: its own answer, read as the browser reads it (notebookAnswerOf). */
  send<Op extends NotebookOp>(command: NotebookSend<Op>): Promise<NotebookAnswer<Op>>;
  /** A probe that need not be a valid command: the server's answer as any notebook op's. */
  send(command: unknown): Promise<NotebookAnswer<NotebookOp>>;
  async send(command: unknown): Promise<NotebookAnswer<NotebookOp>> {
    const reply = await this.socket.timeout(30_000).emitWithAck("notebook:command", command);
    const op = typeof command === "object" && command !== null && "op" in command && typeof command.op === "string" && isNotebookOp(command.op) ? command.op : null;
    return op === null ? reply : notebookAnswerOf(op, reply);
  }

  /** A lab op: its own answer, read as the browser reads it (labAnswerOf). */
  sendLab<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>>;
  /** A probe that need not be a valid command: the server's answer as any lab op's. */
  sendLab(command: unknown): Promise<LabAnswer<LabOp>>;
  async sendLab(command: unknown): Promise<LabAnswer<LabOp>> {
    const reply = await this.socket.timeout(30_000).emitWithAck("lab:command", command);
    const op = typeof command === "object" && command !== null && "op" in command && typeof command.op === "string" && isLabOp(command.op) ? command.op : null;
    return op === null ? reply : labAnswerOf(op, reply);
  }

  /**
   * Types `sources` into their cells and runs them, as the notebook page does:
   * each source saved (set-source), then one execute with the ids and the
   * hashes of the text run. Resolves with the execute's acknowledgement.
   */
  async run(notebookId: string, sources: Record<string, string>): Promise<NotebookAnswer<"set-source" | "execute">> {
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
