/**
 * Sessions that end on the server (sign-out, removal, revocation) must end
 * their open connections at once, and a role an admin changes must count on
 * the user's open connections at once too: connections keep their actor in
 * memory (every event is authorised against it, not against a database
 * read), so whoever changes one says so here; the socket layer listens,
 * disconnects the matching sockets or updates their actor, and passes the
 * notice to the other lab servers.
 */
import type { SessionEndReason } from "../core/protocol/accounts-model";
import type { AccountRole } from "./roles";

export type SessionTarget = { userId: string } | { sessionId: string };
type Listener = (target: SessionTarget, reason: SessionEndReason) => void;
type RoleListener = (userId: string, role: AccountRole) => void;

export class SessionNotices {
  private readonly listeners = new Set<Listener>();
  private readonly roleListeners = new Set<RoleListener>();

  ended(target: SessionTarget, reason: SessionEndReason): void {
    for (const listener of this.listeners) listener(target, reason);
  }

  onEnded(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The user's role is now `role` (stored already): their open connections act under it from the next event. */
  roleChanged(userId: string, role: AccountRole): void {
    for (const listener of this.roleListeners) listener(userId, role);
  }

  onRoleChanged(listener: RoleListener): () => void {
    this.roleListeners.add(listener);
    return () => this.roleListeners.delete(listener);
  }
}
