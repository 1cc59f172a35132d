/**
 * Accounts, sharing and workshops as the pages see them: the shapes the
 * lab commands answer with (socket-api.ts). The server decides every
 * permission; a page only hides what the server would refuse.
 */
import type { WorkshopPace, WorkshopSizing } from "./workshop-model";
export const ROLES = ["admin", "member", "facilitator", "participant"] as const;
export type Role = (typeof ROLES)[number];

/** Roles an admin can give an account with a password (a participant comes from a join code). */
export const ACCOUNT_ROLES = ["admin", "member", "facilitator"] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/** What someone may do with one notebook: "edit" is the owner's. */
export type NotebookAccessLevel = "read" | "run" | "edit";
export type ShareAccess = "read" | "run";

/** The signed-in person and what their role lets the pages offer. */
export interface Me {
  id: string;
  name: string;
  /** null for participants and the token-mode local user. */
  email: string | null;
  role: Role;
  workshopId: string | null;
  /** ISO time the session ends unless used. */
  sessionExpiresAt: string;
  can: {
    createNotebooks: boolean;
    manageUsers: boolean;
    runWorkshops: boolean;
    seeHosts: boolean;
  };
}

/** A user as the admin page lists them. */
export interface UserView {
  id: string;
  name: string;
  email: string;
  role: Role;
  createdAt: string;
  /** Signs in with a password (participants and the token-mode local user do not). */
  hasPassword: boolean;
  /** How they sign in: a password, a workshop's join link, or the sign-in link the lab prints on this machine. */
  signsInWith: "password" | "workshop-link" | "this-machine";
  /** The admin looking at the list (their own row offers no Remove: another admin can). */
  you?: boolean;
  activeSessions: number;
}

/** Someone a notebook is shared with. */
export interface ShareView {
  userId: string;
  name: string;
  email: string;
  access: ShareAccess;
}

export interface WorkshopView {
  id: string;
  title: string;
  joinCode: string;
  scenarioIds: string[];
  closedAt: string | null;
  /** Ended: kernels shut down, notebooks read-only. */
  endedAt: string | null;
  startsAt: string | null;
  endsAt: string | null;
  createdAt: string;
  pace: WorkshopPace;
  capacity: number;
  /** Whether the lab can hold its plan, and what to change: shown on the facilitator's card before the class arrives. */
  sizing: WorkshopSizing;
  /** `waiting`: still in the admission queue. */
  participants: Array<{ id: string; name: string; waiting: boolean; notebooks: Array<{ id: string; title: string }> }>;
}

/** Why the server ended this connection's session (sent just before it disconnects). */
export type SessionEndReason = "signed-out" | "expired" | "removed" | "revoked";
