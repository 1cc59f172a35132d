/**
 * The notebook list's ops (list, create, duplicate, rename, delete,
 * restore): their handlers over the catalog, with renames and deletions run
 * where the notebook is driven. Separate from the socket edge, which only
 * dispatches to them (socket/lab-handler.ts).
 */
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

/** The title of a notebook created without one ("New notebook" opens it at once). */
const UNTITLED = "Untitled";

export type CatalogOp = "list-notebooks" | "create-notebook" | "duplicate-notebook" | "rename-notebook" | "delete-notebook" | "restore-notebook";

export function catalogHandlers({ hub, drivers, access }: Pick<LabServices, "hub" | "drivers" | "access">): LabHandlerTable<CatalogOp> {
  const { catalog } = hub;
  return {
    "list-notebooks": async (command, actor) => ({ ok: true, notebooks: await catalog.list(command.state ?? "active", await access.gate.readableNotebooks(actor)) }),
    "create-notebook": async (command, actor) => {
      const title = command.title ?? (await catalog.freshTitle(actor.userId, UNTITLED));
      return { ok: true, notebook: await catalog.create(actor.userId, title) };
    },
    "duplicate-notebook": async (command, actor) => ({ ok: true, notebook: await catalog.duplicate(actor.userId, command.notebookId) }),
    "rename-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "rename", title: command.title });
      return { ok: true, notebook: await catalog.summary(command.notebookId) };
    },
    "delete-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "deleted", deleted: true });
      return { ok: true, notebook: await catalog.summary(command.notebookId) };
    },
    "restore-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "deleted", deleted: false });
      return { ok: true, notebook: await catalog.summary(command.notebookId) };
    },
  };
}
