/**
 * The end of this page's session, whichever socket learns of it first. The
 * server says `session:ended` (signed out, expired, removed, revoked) just
 * before it disconnects a socket, and refuses a handshake without a session
 * with a connect_error whose message starts with "unauthorized". Either way
 * the socket must stop reconnecting (every try would be refused) and the
 * page must say why, once: the banner reads `pageSession`.
 *
 * Both sockets of a page (the notebook's, connection.ts, and the lab
 * commands', lab-client.ts) go through `watchSession`.
 */
import type { SessionEndReason } from "../../server/core/protocol/accounts-model";
import { assertNever } from "../../server/core/assert-never";

/** Why the session ended: the server's reason, or "unauthorized" when a connection was refused for want of one. */
export type SessionEnd = SessionEndReason | "unauthorized";

const REASONS = ["signed-out", "expired", "removed", "revoked"] as const satisfies readonly SessionEndReason[];

function isSessionEndReason(value: unknown): value is SessionEndReason {
  return typeof value === "string" && (REASONS as readonly string[]).includes(value);
}

/** The reason off the wire, checked: anything unknown reads as a session the server no longer accepts. */
export function parseSessionEnd(value: unknown): SessionEnd {
  return isSessionEndReason(value) ? value : "unauthorized";
}

/** Whether a connect_error means "no (valid) session" rather than a network failure worth retrying. */
export function isUnauthorizedError(message: string): boolean {
  return message.startsWith("unauthorized");
}

/** The reason in words, for "You were signed out: …". */
export function sessionEndWords(reason: SessionEnd): string {
  switch (reason) {
    case "signed-out":
      return "you signed out (in this or another tab)";
    case "expired":
      return "your session expired";
    case "removed":
      return "an admin removed your account";
    case "revoked":
      return "your session was ended on the server";
    case "unauthorized":
      return "the server no longer accepts this session";
    default:
      return assertNever(reason);
  }
}

/** The page's one record of how its session ended, read by the banner (useSyncExternalStore). */
export class SessionWatch {
  private ended: SessionEnd | null = null;
  private leaving = false;
  private readonly listeners = new Set<() => void>();

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): SessionEnd | null => this.ended;

  /** The first end counts; one the page asked for itself (signing out) is no news. */
  end(reason: SessionEnd): void {
    if (this.ended !== null || this.leaving) return;
    this.ended = reason;
    for (const listener of this.listeners) listener();
  }

  /** This tab is signing out: the sockets that close behind it need no banner. */
  leave(): void {
    this.leaving = true;
  }

  /** The sign-out did not happen after all: endings count again. */
  stay(): void {
    this.leaving = false;
  }

  get over(): boolean {
    return this.ended !== null || this.leaving;
  }
}

/** The one watch of this page (module state: a page load is one session). */
export const pageSession = new SessionWatch();

/** What watchSession needs of a socket.io client socket. */
export interface WatchedSocket {
  on(event: "session:ended", listener: (reason: SessionEndReason) => void): unknown;
  on(event: "connect_error", listener: (err: Error) => void): unknown;
  disconnect(): unknown;
  readonly io: { reconnection(enabled: boolean): unknown };
}

/**
 * Ends `socket` for good when its session ends: no more reconnecting (the
 * manager's own retries, and `onEnded` tells the owner so it stops its own),
 * and the page's watch records why.
 */
export function watchSession(socket: WatchedSocket, onEnded: (reason: SessionEnd) => void = () => {}, watch: SessionWatch = pageSession): void {
  const end = (reason: SessionEnd): void => {
    socket.io.reconnection(false);
    onEnded(reason);
    socket.disconnect();
    watch.end(reason);
  };
  socket.on("session:ended", (reason) => end(parseSessionEnd(reason)));
  socket.on("connect_error", (err) => {
    if (isUnauthorizedError(err.message)) end("unauthorized");
  });
}
