/**
 * What the notebook page offers a viewer, from the access the server gave on
 * opening: "edit" (the owner) everything, "run" running the kernel without
 * changing the notebook, "read" only looking. The server refuses the rest
 * anyway; this decides what the page hides and which intents it drops.
 */
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { assertNever } from "../../server/core/assert-never";

/** What an intent needs: running the kernel (run, interrupt, restart) or changing the notebook. */
export type AccessNeed = "run" | "edit";

/** Null: the server has not said yet (the page is opening); nothing is offered until it does. */
export function mayDo(access: NotebookAccessLevel | null, need: AccessNeed): boolean {
  switch (access) {
    case null:
    case "read":
      return false;
    case "run":
      return need === "run";
    case "edit":
      return true;
    default:
      return assertNever(access);
  }
}

/** The badge of a notebook someone else shared ("Read only — shared by Ada"); null for one's own. */
export function accessBadge(access: NotebookAccessLevel | null, owner: string | null): string | null {
  const by = owner === null ? "shared with you" : `shared by ${owner}`;
  switch (access) {
    case null:
    case "edit":
      return null;
    case "read":
      return `Read only — ${by}`;
    case "run":
      return `Can run — ${by}`;
    default:
      return assertNever(access);
  }
}

/** Why an intent was dropped, for the notice the page shows. */
export function refusedText(access: NotebookAccessLevel | null, need: AccessNeed): string {
  if (access === null) return "The notebook is still opening";
  return need === "run" ? "This notebook is shared with you read-only: it cannot be run from here" : "This notebook is shared with you: it cannot be changed from here";
}
