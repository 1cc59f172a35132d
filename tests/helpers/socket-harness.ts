/**
 * The socket edge without Next: a real HTTP server with socket.io and the
 * notebook hub over real kernels, on a free loopback port.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { io as connect, type Socket } from "socket.io-client";
import { localHost } from "../../server/kernel/kernel-host";
import { createLogger } from "../../server/logger";
import { NotebookHub } from "../../server/notebook/notebook-hub";
import type { ClientToServerEvents, CommandAck, NotebookEvent, ServerToClientEvents } from "../../server/protocol/socket-api";
import { SOCKET_SERVER_OPTIONS, attachNotebookSocket, roomOf } from "../../server/socket/notebook-socket";

export type ClientSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export class SocketHarness {
  private constructor(
    readonly url: string,
    readonly hub: NotebookHub,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
    private readonly http: HttpServer,
  ) {}

  static async start(): Promise<SocketHarness> {
    const http = createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, SOCKET_SERVER_OPTIONS);
    const hub = new NotebookHub({
      host: () => localHost(),
      broadcast: (notebookId, event, seq) => io.to(roomOf(notebookId)).emit("notebook:event", notebookId, event, seq),
    });
    attachNotebookSocket(io, hub, createLogger("silent"));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    return new SocketHarness(`http://127.0.0.1:${port}`, hub, io, http);
  }

  async client(): Promise<TestClient> {
    const socket: ClientSocket = connect(this.url, { transports: ["websocket"], forceNew: true });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    return new TestClient(socket);
  }

  async close(): Promise<void> {
    await this.hub.shutdownAll();
    await new Promise<void>((resolve) => {
      void this.io.close(() => resolve());
    });
    this.http.closeAllConnections();
  }
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

  waitFor(test: (event: NotebookEvent) => boolean): Promise<NotebookEvent> {
    const seen = this.events.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((wake) => this.waiters.push({ test, wake }));
  }

  close(): void {
    this.socket.disconnect();
  }
}
