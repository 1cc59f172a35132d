/**
 * The socket.io edge: authenticates every connection, validates each command
 * off the wire, authorises it (server/auth/authorize.ts) and dispatches it:
 * a notebook op to where the notebook is driven, a lab op to its feature
 * module's handler (socket/lab-handler.ts). It does no feature work itself.
 */
import type { Server, ServerOptions } from "socket.io";
import { checkSocketHandshake, type LabNames } from "../http/request-guard";
import { labCommandSchema, notebookCommandSchema, type ClientToServerEvents, type LabCommand, type ServerToClientEvents } from "../core/protocol/socket-api";
import type { LabAnswer, LabOp } from "../core/protocol/ops-lab";
import type { NotebookAnswer, NotebookOp, NotebookSend } from "../core/protocol/ops-notebook";
import type { NotebookAccessLevel } from "../core/protocol/accounts-model";
import { MAX_MESSAGE_BYTES } from "../core/limits";
import type { Log } from "../logger";
import { CommandError, describeInvalid, toClientError } from "../errors";
import type { Actor } from "../auth";
import { authorizeLabCommand, authorizeNotebookCommand } from "../auth/authorize";
import { consoleRoom } from "../workshops/workshop-handlers";
import { labHandlers } from "./lab-op-handlers";
import type { NotebookDrivers } from "../cluster/notebook-drivers";
import { attachSocketSessions, userRoom } from "./socket-sessions";
import { dispatchLab, type LabHandlers, type LabServices, type LabSocket } from "./lab-handler";

export type { LabHandler } from "./lab-handler";

export type LabServer = Server<ClientToServerEvents, ServerToClientEvents>;

/**
 * Room for any valid command (MAX_MESSAGE_BYTES); shared by the server and
 * its tests. WebSocket only: a connection is one TCP stream to one server,
 * so several lab servers behind a load balancer need no sticky sessions
 * (long-polling's requests could land on different servers).
 */
export const SOCKET_SERVER_OPTIONS: Partial<ServerOptions> = { maxHttpBufferSize: MAX_MESSAGE_BYTES, pingTimeout: 20_000, transports: ["websocket"] };

/**
 * The socket server's options with the handshake guard: only the lab's own
 * names and origins may open a connection (request-guard.ts). `names` is read
 * per handshake because the port is known only once the server listens.
 */
export function socketServerOptions(names: () => LabNames, onRefused: (reason: string) => void): Partial<ServerOptions> {
  return {
    ...SOCKET_SERVER_OPTIONS,
    allowRequest: (req, callback) => {
      const verdict = checkSocketHandshake(req.headers, names());
      if (!verdict.ok) onRefused(verdict.reason);
      callback(verdict.ok ? null : verdict.reason, verdict.ok);
    },
  };
}

export function roomOf(notebookId: string): string {
  return `notebook:${notebookId}`;
}

export interface SocketServices extends LabServices {
  log: Log;
}

/**
 * Every connection is a signed-in person (socket-sessions.ts), and every
 * event is authorised through server/auth/authorize.ts before it reaches
 * the hub: there is no other path from a socket to the lab.
 */
export function attachNotebookSocket(io: LabServer, services: SocketServices): void {
  const { log } = services;
  const fail = (error: unknown, what: string) => {
    const failure = toClientError(error);
    if (!failure.expected) log("error", `${what} failed`, { err: error });
    return failure;
  };
  const sessions = attachSocketSessions(io, services.access, services.repositories.accounts, services.drivers.several);
  watchViewers(io, services.drivers);
  const handlers = labHandlers(services);
  services.workshops.attach({
    console: (workshopId, view) => io.to(consoleRoom(workshopId)).emit("workshop:console", workshopId, view),
    participant: (userId, view) => io.to(userRoom(userId)).emit("workshop:participant", view),
    // With several servers a console may be open on another one: the views are computed wherever the events happen.
    watching: (workshopId) => services.drivers.several || (io.of("/").adapter.rooms.get(consoleRoom(workshopId))?.size ?? 0) > 0,
  });
  io.on("connection", (socket: LabSocket) => {
    // A participant's roster row says whether a tab of theirs is connected.
    const connected = socket.data.actor as Actor;
    const workshopId = connected.role === "participant" ? connected.workshopId : null;
    if (workshopId !== null) {
      services.workshops.live.connected(connected.userId, workshopId);
      socket.on("disconnect", () => services.workshops.live.disconnected(connected.userId, workshopId));
    }
    socket.on("notebook:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: NotebookAnswer<NotebookOp>) => void) : () => undefined;
      sessions
        .current(socket)
        .then((actor) => handleCommand(socket, actor, services, raw))
        .then(reply, (error: unknown) => {
          const { error: message, code, conflict } = fail(error, "command");
          reply(conflict ? { ok: false, error: message, code, conflict } : { ok: false, error: message, code });
        });
    });
    socket.on("lab:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: LabAnswer<LabOp>) => void) : () => undefined;
      sessions
        .current(socket)
        .then((actor) => handleLabCommand(socket, actor, services, handlers, raw))
        .then(reply, (error: unknown) => {
          const { error: message, code } = fail(error, "lab command");
          reply({ ok: false, error: message, code });
        });
    });
  });
}

async function handleCommand(socket: LabSocket, actor: Actor, services: SocketServices, raw: unknown): Promise<NotebookAnswer<NotebookOp>> {
  const parsed = notebookCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command = parsed.data;
  const level = await authorizeNotebookCommand(services.access.gate, actor, command);
  if (command.op === "open") return open(socket, actor, services, command, level);
  if (!socket.rooms.has(roomOf(command.notebookId))) {
    throw new CommandError("invalid", `open notebook ${command.notebookId} before sending ${command.op}`);
  }
  // Run where the notebook is driven (notebook-drivers.ts: each op's handler there).
  return services.drivers.command(command.notebookId, { command, socketId: socket.id, participant: actor.role === "participant" });
}

/** Joins the notebook's room and answers the snapshot (or the missed events) with what this viewer may do. */
async function open(socket: LabSocket, actor: Actor, services: SocketServices, command: NotebookSend<"open">, level: NotebookAccessLevel): Promise<NotebookAnswer<"open">> {
  const room = roomOf(command.notebookId);
  // In the room first: an event sent while the snapshot is made arrives after it (and is skipped by its seq) instead of being lost.
  const wasIn = socket.rooms.has(room);
  await socket.join(room);
  const ack = await services.drivers.command(command.notebookId, { command, socketId: socket.id, participant: actor.role === "participant" });
  if (!ack.ok && !wasIn) await socket.leave(room);
  // The facilitator's roster shows a participant on the copy they just opened.
  if (ack.ok && actor.role === "participant" && actor.workshopId) services.workshops.live.opened(actor.userId, actor.workshopId, command.notebookId);
  return ack.ok ? { ...ack, access: level } : ack;
}

async function handleLabCommand(socket: LabSocket, actor: Actor, services: SocketServices, handlers: LabHandlers, raw: unknown): Promise<LabAnswer<LabOp>> {
  const parsed = labCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command: LabCommand = parsed.data;
  await authorizeLabCommand(services.access.gate, actor, command);
  return dispatchLab(handlers, command.op, command, actor, socket);
}

/**
 * A notebook's viewers are the sockets in its room, counted where socket.io
 * adds and removes them: joining on open, and leaving on any disconnect
 * (closed tab, lost network, ping timeout), which `disconnect` handlers
 * alone would not all see in order.
 */
function watchViewers(io: LabServer, drivers: NotebookDrivers): void {
  const rooms = io.of("/").adapter;
  rooms.on("join-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") drivers.viewer(notebookId, socketId, "joined");
  });
  rooms.on("leave-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") drivers.viewer(notebookId, socketId, "left");
  });
}

/** This server's connections in the notebook's room (a server that takes a notebook over counts them as its viewers). */
export function localViewersOf(io: LabServer, notebookId: string): string[] {
  return [...(io.of("/").adapter.rooms.get(roomOf(notebookId)) ?? [])];
}

function notebookOfRoom(room: unknown): string | null {
  const prefix = roomOf("");
  return typeof room === "string" && room.startsWith(prefix) ? room.slice(prefix.length) : null;
}
