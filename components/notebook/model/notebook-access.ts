/**
 * What the notebook page offers a viewer, from the access the server gave on
 * opening: "edit" (the owner) everything, "run" running the kernel without
 * changing the notebook, "read" only looking. The server refuses the rest
 * anyway; this decides what the page hides and which intents it drops.
 */
import type { NotebookAccessLevel } from "../../../server/core/protocol/accounts-model";
import type { NotebookAction } from "../../../server/core/protocol/access-needs";
import { LAB_OPS, type LabOp } from "../../../server/core/protocol/ops-lab";
import { NOTEBOOK_OPS, type NotebookOp } from "../../../server/core/protocol/ops-notebook";
import { assertNever } from "../../../server/core/assert-never";

/** What an intent needs of the notebook: the need of the op it sends, as the op table declares it (the server's own rule). */
export type AccessNeed = NotebookAction;

/** What a notebook op needs (ops-notebook.ts). */
export function needOf(op: NotebookOp): AccessNeed {
  return NOTEBOOK_OPS[op].access;
}

/** What a lab op about this notebook needs of it (ops-lab.ts); one not about a notebook is the server's to judge. */
export function labNeedOf(op: LabOp): AccessNeed | null {
  const rule = LAB_OPS[op].access;
  return rule.kind === "notebook" ? rule.action : null;
}

/** Null: the server has not said yet (the page is opening); nothing is offered until it does. Only the owner ("edit") manages. */
export function mayDo(access: NotebookAccessLevel | null, need: AccessNeed): boolean {
  switch (access) {
    case null:
      return false;
    case "read":
      return need === "read";
    case "run":
      return need === "read" || need === "run";
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
