/**
 * The socket.io edge: validates every command off the wire, routes it to the
 * notebook hub, and turns any failure into one clear acknowledgement.
 */
import type { Server, Socket } from "socket.io";
import { notebookCommandSchema, type ClientToServerEvents, type CommandAck, type ServerToClientEvents } from "../protocol/socket-api";
import { CommandError } from "../notebook/notebook-ops";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { Logger } from "../logger";

export type LabServer = Server<ClientToServerEvents, ServerToClientEvents>;
type LabSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** Room for a source of MAX_SOURCE_CHARS characters in a command; shared by the server and its tests. */
export const SOCKET_SERVER_OPTIONS = { maxHttpBufferSize: 4 * 1024 * 1024, pingTimeout: 20_000 } as const;

export function roomOf(notebookId: string): string {
  return `notebook:${notebookId}`;
}

export function attachNotebookSocket(io: LabServer, hub: NotebookHub, log: Logger): void {
  io.on("connection", (socket: LabSocket) => {
    socket.on("notebook:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: CommandAck) => void) : () => undefined;
      handleCommand(socket, hub, raw).then(reply, (error: unknown) => {
        if (!(error instanceof CommandError)) log.error({ err: error }, "command failed");
        reply({ ok: false, error: error instanceof Error ? error.message : String(error) });
      });
    });
  });
}

async function handleCommand(socket: LabSocket, hub: NotebookHub, raw: unknown): Promise<CommandAck> {
  const parsed = notebookCommandSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CommandError(`invalid command: ${issue ? `${issue.path.join(".") || "command"}: ${issue.message}` : "malformed"}`);
  }
  const command = parsed.data;
  if (command.op === "open") {
    const runtime = hub.open(command.notebookId);
    await socket.join(roomOf(command.notebookId));
    return runtime.join(command.resume);
  }
  const runtime = hub.get(command.notebookId);
  if (!runtime || !socket.rooms.has(roomOf(command.notebookId))) {
    throw new CommandError(`open notebook ${command.notebookId} before sending ${command.op}`);
  }
  await runtime.handle(command, socket.id);
  return { ok: true };
}
