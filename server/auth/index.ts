/**
 * The lab's accounts and access, put together once per lab: Better Auth
 * (sessions, sign-in), the accounts an admin manages, the access gate every
 * route and socket event goes through, and the notices that end sockets.
 */
import type { LabRepositories } from "../persistence";
import { AccessGate } from "./access-gate";
import { Accounts } from "./accounts";
import { KernelRefs } from "./kernel-refs";
import { createLabAuth, type AuthSettings, type LabAuth } from "./lab-auth";
import { SessionNotices } from "./session-notices";

export interface LabAccess {
  auth: LabAuth;
  accounts: Accounts;
  gate: AccessGate;
  notices: SessionNotices;
  /** Opaque refs for kernels of notebooks a viewer may not name. */
  kernelRefs: KernelRefs;
}

export function openAccess(repositories: LabRepositories, settings: AuthSettings): LabAccess {
  return {
    auth: createLabAuth(repositories, settings),
    accounts: new Accounts(repositories.accounts),
    gate: new AccessGate(repositories.access, repositories.workshops),
    notices: new SessionNotices(),
    kernelRefs: new KernelRefs(settings.secret),
  };
}

export type { Actor } from "./roles";
export type { AuthSettings } from "./lab-auth";
export { actorOf, recheckActor, AUTH_BASE_PATH, CLIENT_IP_HEADER } from "./lab-auth";
