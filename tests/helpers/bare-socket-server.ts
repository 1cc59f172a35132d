/**
 * A socket.io server on a free loopback port that answers each notebook or
 * lab command with what the test says (or never), for the browser's socket
 * pieces tested without the lab behind them.
 */
import { createServer } from "node:http";
import { Server, type Socket } from "socket.io";
import { io as connect } from "socket.io-client";
import type { NotebookSocket } from "../../components/shell/model/socket-rpc";
import type { ClientToServerEvents, ServerToClientEvents } from "../../server/core/protocol/socket-api";
import type { LabAnswer, LabOp } from "../../server/core/protocol/ops-lab";
import type { NotebookAnswer, NotebookOp } from "../../server/core/protocol/ops-notebook";

/** What the server does with a command: answer with this, or (undefined) never answer. */
export type Responder<Reply> = (command: unknown) => Reply | undefined;

export class BareSocketServer {
  notebook: Responder<NotebookAnswer<NotebookOp>> = () => ({ ok: true });
  lab: Responder<LabAnswer<LabOp>> = () => ({ ok: true });
  readonly sockets: Array<Socket<ClientToServerEvents, ServerToClientEvents>> = [];

  private constructor(
    readonly url: string,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
  ) {}

  static async start(): Promise<BareSocketServer> {
    const http = createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const address = http.address();
    if (address === null || typeof address === "string") throw new Error("the test server has no port");
    const server = new BareSocketServer(`http://127.0.0.1:${address.port}`, io);
    io.on("connection", (socket) => {
      server.sockets.push(socket);
      socket.on("notebook:command", (command, ack) => answer(server.notebook(command), ack));
      socket.on("lab:command", (command, ack) => answer(server.lab(command), ack));
    });
    return server;
  }

  /** A client socket to this server, not yet connected unless asked. */
  client(autoConnect = true): NotebookSocket {
    return connect(this.url, { transports: ["websocket"], forceNew: true, reconnectionDelay: 50, reconnectionDelayMax: 100, autoConnect });
  }

  close(): Promise<void> {
    return new Promise((resolve) => void this.io.close(() => resolve()));
  }
}

function answer<Reply>(reply: Reply | undefined, ack: (reply: Reply) => void): void {
  if (reply !== undefined) ack(reply);
}
