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
 *
 * Two ends are this tab's own doing and get no banner: signing out (the
 * page leaves for /login) and changing its password, which replaces this
 * tab's session with a new one (the page reloads into it).
 */
import type { SessionEndReason } from "../../../server/core/protocol/accounts-model";
import { assertNever } from "../../../server/core/assert-never";

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

/**
 * Where this tab stands with a password change it asked for (which replaces
 * every session of the user, this tab's too: the answer carries the new
 * cookie). "asked": the request is out, and an end that arrives now waits for
 * its answer (reloading before the browser holds the new cookie would sign
 * the tab out); "changed": the browser holds the new cookie, and the end of
 * the old session means reload.
 */
type Renewal = { phase: "none" } | { phase: "asked"; ended: SessionEnd | null } | { phase: "changed" } | { phase: "reloading" };

/** The page's one record of how its session ended, read by the banner (useSyncExternalStore). */
export class SessionWatch {
  private ended: SessionEnd | null = null;
  private leaving = false;
  private renewal: Renewal = { phase: "none" };
  private readonly listeners = new Set<() => void>();

  /** `reload`: what a tab whose session this tab itself replaced does when the old one ends. */
  constructor(private readonly reload: () => void = () => window.location.reload()) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): SessionEnd | null => this.ended;

  /** The first end counts; one the page asked for itself (signing out, changing the password) is no news. */
  end(reason: SessionEnd): void {
    if (this.ended !== null || this.leaving) return;
    switch (this.renewal.phase) {
      case "none":
        break;
      case "asked":
        this.renewal.ended ??= reason;
        return;
      case "changed":
        this.reloadOnce();
        return;
      case "reloading":
        return;
      default:
        return assertNever(this.renewal);
    }
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

  /** This tab asks to change its password (other sessions revoked): the end of its own session is expected. */
  expectRenewal(): void {
    if (this.renewal.phase === "none") this.renewal = { phase: "asked", ended: null };
  }

  /** The password changed and the browser holds the new cookie: the old session's end (already come, or still to come) reloads the page. */
  renewed(): void {
    if (this.renewal.phase !== "asked") return;
    const endedMeanwhile = this.renewal.ended !== null;
    this.renewal = { phase: "changed" };
    if (endedMeanwhile) this.reloadOnce();
  }

  /** The change was refused: this session goes on, and an end that came meanwhile was news after all. */
  renewalFailed(): void {
    if (this.renewal.phase !== "asked") return;
    const endedMeanwhile = this.renewal.ended;
    this.renewal = { phase: "none" };
    if (endedMeanwhile !== null) this.end(endedMeanwhile);
  }

  /** Nothing more to do on this page: it ended, is signing out, or reloads into its new session. */
  get over(): boolean {
    return this.ended !== null || this.leaving || this.renewal.phase === "reloading";
  }

  private reloadOnce(): void {
    this.renewal = { phase: "reloading" };
    this.reload();
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
