/**
 * The lab's authorization policy: one pure function from (who, what, facts
 * about the target) to a decision. Every HTTP route and socket event reaches
 * it through the access gate (access-gate.ts); nothing else decides.
 *
 * The rules:
 * - A notebook's owner does everything with it. A member can share it with
 *   another user for "read" or "run" (run includes read). A facilitator
 *   can read and run (restart a kernel) every notebook of their own
 *   workshops, and edit none. A participant has only their own copies.
 * - Once a workshop has ended its notebooks are read-only to everyone:
 *   participants keep reading and exporting their copies through their link.
 * - An admin manages users and can list and stop any kernel (a held GPU is
 *   everyone's problem) but reads nobody's notebook that is not shared.
 * - Anything not allowed is "hidden": the caller answers 404, the same as
 *   for an id that does not exist, so guessing confirms nothing.
 */
import type { LabAction, NotebookAction } from "../core/protocol/access-needs";
import type { Actor, Role } from "./roles";

/** What can be done with one notebook, from least to most. */
export const NOTEBOOK_ACCESS = ["none", "read", "run", "edit"] as const;
export type NotebookAccess = (typeof NOTEBOOK_ACCESS)[number];

export type { LabAction, NotebookAction } from "../core/protocol/access-needs";

/** Facts about a notebook the policy needs, loaded by the gate. */
export interface NotebookFacts {
  ownerId: string;
  workshopId: string | null;
  /** The workshop's facilitator, when the notebook belongs to one. */
  workshopFacilitatorId: string | null;
  /** The notebook's workshop has ended. */
  workshopEnded: boolean;
  /** What the owner shared with this actor, if anything. */
  sharedWithActor: "read" | "run" | null;
}

const LAB_ACTIONS: Record<Role, ReadonlySet<LabAction>> = {
  admin: new Set(["list-own", "create-notebook", "list-scenarios", "list-hosts", "check-host", "list-all-kernels", "manage-users"]),
  member: new Set(["list-own", "create-notebook", "list-scenarios", "list-hosts", "check-host"]),
  facilitator: new Set(["list-own", "create-notebook", "list-scenarios", "list-hosts", "check-host", "run-workshops"]),
  participant: new Set(["list-own", "list-scenarios", "see-own-workshop"]),
};

export function mayDo(actor: Actor, action: LabAction): boolean {
  return LAB_ACTIONS[actor.role].has(action);
}

/** The most this actor may do with this notebook. */
export function notebookAccess(actor: Actor, facts: NotebookFacts): NotebookAccess {
  if (facts.ownerId === actor.userId) {
    // A participant's own copy is theirs only inside their workshop.
    if (actor.role === "participant" && facts.workshopId !== actor.workshopId) return "none";
    return facts.workshopEnded ? "read" : "edit";
  }
  // A participant sees nothing of anybody else's, shared or not.
  if (actor.role === "participant") return "none";
  if (actor.role === "facilitator" && facts.workshopId !== null && facts.workshopFacilitatorId === actor.userId) return facts.workshopEnded ? "read" : "run";
  return facts.sharedWithActor ?? "none";
}

const NEEDS: Record<NotebookAction, NotebookAccess> = { read: "read", run: "run", edit: "edit", manage: "edit" };

export function mayDoWithNotebook(actor: Actor, action: NotebookAction, facts: NotebookFacts): boolean {
  return NOTEBOOK_ACCESS.indexOf(notebookAccess(actor, facts)) >= NOTEBOOK_ACCESS.indexOf(NEEDS[action]);
}

/** Stopping a notebook's kernel: whoever may run it, and an admin for any kernel. */
export function mayStopKernel(actor: Actor, facts: NotebookFacts): boolean {
  return mayDo(actor, "list-all-kernels") || mayDoWithNotebook(actor, "run", facts);
}
