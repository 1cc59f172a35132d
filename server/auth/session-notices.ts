/**
 * Sessions that end on the server (sign-out, removal, revocation) must end
 * their open connections at once. Whoever ends one says so here; the socket
 * layer listens and disconnects the matching sockets.
 */
import type { SessionEndReason } from "../core/protocol/accounts-model";

export type SessionTarget = { userId: string } | { sessionId: string };
type Listener = (target: SessionTarget, reason: SessionEndReason) => void;

export class SessionNotices {
  private readonly listeners = new Set<Listener>();

  ended(target: SessionTarget, reason: SessionEndReason): void {
    for (const listener of this.listeners) listener(target, reason);
  }

  onEnded(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
