/**
 * What an op needs of whoever sends it, as the op table declares it
 * (ops-notebook.ts, ops-lab.ts). server/auth/authorize.ts enforces these;
 * the browser reads the same declarations to decide what a page offers.
 */

/** Actions on one notebook (its cells, kernel, runs, outputs, metrics, predictions, files). */
export type NotebookAction =
  /** Open, view, export, read its runs' metrics, copy it into one's own notebooks. */
  | "read"
  /** Run, interrupt, restart and shut down its kernel. */
  | "run"
  /** Change cells, parameters, predictions, kernel spec, title. */
  | "edit"
  /** Delete, restore, share. */
  | "manage";

/** Actions not about one notebook. */
export type LabAction =
  | "list-own"
  | "create-notebook"
  | "list-scenarios"
  | "list-hosts"
  | "check-host"
  | "list-all-kernels"
  | "manage-users"
  | "run-workshops"
  /** A participant's own workshop: admission, pace, broadcasts. */
  | "see-own-workshop";

/** What a lab op needs. */
export type LabRule =
  /** Anyone signed in. */
  | { kind: "signed-in" }
  /** A role permission (no id: a refusal may say so). */
  | { kind: "lab"; action: LabAction }
  /** Something done with the command's notebook (the op's request has a notebookId). */
  | { kind: "notebook"; action: NotebookAction; also?: LabAction }
  /** Stopping the command's notebook's kernel. */
  | { kind: "stop-kernel" }
  /** The command's workshop (the op's request has a workshopId), which must be the actor's own as its facilitator. */
  | { kind: "workshop" };
