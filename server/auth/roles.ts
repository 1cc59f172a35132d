/**
 * Who is asking: the actor every check is about, as the server resolved
 * them from their session. The roles themselves are protocol
 * (core/protocol/accounts-model.ts): the pages show them too.
 */
import { ROLES, type Role } from "../core/protocol/accounts-model";

export { ACCOUNT_ROLES, ROLES, type AccountRole, type Role } from "../core/protocol/accounts-model";

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** A signed-in person as the server resolved them from their session. */
export interface Actor {
  userId: string;
  name: string;
  role: Role;
  /** A participant's workshop (their session is scoped to it); null for everyone else. */
  workshopId: string | null;
  sessionId: string;
  /** When the session ends unless refreshed. */
  expiresAt: Date;
}
