/**
 * Sessions on the socket: a connection opens only with a valid session
 * cookie (checked at the handshake, the same cookie the pages use), and
 * keeps the actor it resolved in memory: every event is authorised against
 * it without a database read. It stays true by push, not by polling: a
 * session that ends (sign-out, removal, a new password) ends its
 * connections at once, each told why; a role an admin changes is set on
 * the user's connections before the admin's command is answered (and on
 * other lab servers' connections through the socket adapter); at its expiry
 * the session is read again (a page load may have renewed it) and the
 * connection ends if it is over.
 *
 * Rooms per user and per session make "end these connections" one call
 * that also reaches sockets on other servers once an adapter joins them.
 */
import type { Server, Socket } from "socket.io";
import { actorOf, recheckActor, type Actor, type LabAccess } from "../auth";
import type { SessionTarget } from "../auth/session-notices";
import { isRole, type AccountRole } from "../auth/roles";
import type { SessionEndReason } from "../core/protocol/accounts-model";
import type { ClientToServerEvents, ServerToClientEvents } from "../core/protocol/socket-api";
import { CommandError } from "../errors";
import type { AccountRepository } from "../persistence/account-repository";

type LabSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** The message a refused handshake carries (the pages branch on its first word). */
export const UNAUTHORIZED_HANDSHAKE = "unauthorized: sign in to use this lab";
/** setTimeout's ceiling; a later expiry is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The inter-server event that carries a role change to the other lab servers' connections. */
const ROLE_CHANGED = "lab:role-changed";

export interface SocketSessions {
  /** The connection's actor as it is now; ends the connection and throws "unauthorized" when the session is over. */
  current(socket: LabSocket): Promise<Actor>;
}

/** `clustered`: other lab servers share this lab (their connections hear of role changes through the adapter). */
export function attachSocketSessions(io: Server<ClientToServerEvents, ServerToClientEvents>, access: LabAccess, accounts: AccountRepository, clustered = false): SocketSessions {
  io.use((socket, next) => {
    actorOf(access.auth, socket.request.headers).then(
      (actor) => {
        if (!actor) return next(new Error(UNAUTHORIZED_HANDSHAKE));
        socket.data.actor = actor;
        void socket.join([userRoom(actor.userId), sessionRoom(actor.sessionId)]);
        next();
      },
      () => next(new Error(UNAUTHORIZED_HANDSHAKE)),
    );
  });
  io.on("connection", (socket: LabSocket) => watchExpiry(socket, accounts));
  access.notices.onEnded((target, reason) => endSockets(io, target, reason));
  access.notices.onRoleChanged((userId, role) => {
    setRole(io, userId, role);
    if (clustered) io.serverSideEmit(ROLE_CHANGED, userId, role);
  });
  io.on(ROLE_CHANGED, (userId: unknown, role: unknown) => {
    if (typeof userId === "string" && isRole(role) && role !== "participant") setRole(io, userId, role);
  });
  return {
    async current(socket) {
      const known = socket.data.actor as Actor | undefined;
      // Kept true by the notices above; only a session past its known end is read again.
      if (known && known.expiresAt.getTime() > Date.now()) return known;
      const actor = known ? await recheckActor(accounts, known) : "revoked";
      if (typeof actor === "string") {
        endSocket(socket, actor);
        throw new CommandError("unauthorized", "your session has ended; sign in again");
      }
      socket.data.actor = actor;
      return actor;
    },
  };
}

/** At the session's end, re-read it (a page load may have renewed it) and end the connection if it is over. */
function watchExpiry(socket: LabSocket, accounts: AccountRepository): void {
  let timer: NodeJS.Timeout | undefined;
  const arm = (expiresAt: Date) => {
    timer = setTimeout(() => void check(), Math.min(MAX_TIMER_MS, Math.max(0, expiresAt.getTime() - Date.now())));
    timer.unref();
  };
  const check = async () => {
    const known = socket.data.actor as Actor;
    // A database hiccup is not an expiry: look again a little later.
    const actor = await recheckActor(accounts, known).catch(() => ({ ...known, expiresAt: new Date(Date.now() + 30_000) }));
    if (typeof actor === "string") return endSocket(socket, actor);
    socket.data.actor = actor;
    arm(actor.expiresAt);
  };
  arm((socket.data.actor as Actor).expiresAt);
  socket.on("disconnect", () => clearTimeout(timer));
}

function endSockets(io: Server<ClientToServerEvents, ServerToClientEvents>, target: SessionTarget, reason: SessionEndReason): void {
  const room = "userId" in target ? userRoom(target.userId) : sessionRoom(target.sessionId);
  io.to(room).emit("session:ended", reason);
  io.in(room).disconnectSockets(true);
}

/** The user's connections on this server act under `role` from their next event. */
function setRole(io: Server<ClientToServerEvents, ServerToClientEvents>, userId: string, role: AccountRole): void {
  const sockets = io.of("/").sockets;
  for (const socketId of io.of("/").adapter.rooms.get(userRoom(userId)) ?? []) {
    const socket = sockets.get(socketId);
    const actor = socket?.data.actor as Actor | undefined;
    if (socket && actor) socket.data.actor = { ...actor, role };
  }
}

function endSocket(socket: LabSocket, reason: SessionEndReason): void {
  socket.emit("session:ended", reason);
  socket.disconnect(true);
}

/** Every connection of one user (their session notices, a participant's workshop view). */
export function userRoom(userId: string): string {
  return `user:${userId}`;
}

function sessionRoom(sessionId: string): string {
  return `session:${sessionId}`;
}
