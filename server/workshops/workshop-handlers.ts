/**
 * The workshop ops (the facilitator's list, console and changes; the
 * participant's own view): their handlers over Workshops. Separate from the
 * socket edge, which only dispatches to them (socket/lab-handler.ts) and
 * pushes each console's updates to the room named here.
 */
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

export type WorkshopOp = "list-workshops" | "create-workshop" | "workshop-console" | "update-workshop" | "workshop-broadcast" | "my-workshop";

/** The socket.io room of the facilitator consoles open on one workshop. */
export function consoleRoom(workshopId: string): string {
  return `workshop-console:${workshopId}`;
}

export function workshopHandlers({ workshops }: Pick<LabServices, "workshops">): LabHandlerTable<WorkshopOp> {
  return {
    "list-workshops": async (_command, actor) => ({ ok: true, workshops: await workshops.listFor(actor.userId) }),
    "create-workshop": async (command, actor) => {
      const { op: _op, title, scenarioIds, ...options } = command;
      return { ok: true, workshop: await workshops.create(actor.userId, title, scenarioIds, options) };
    },
    "workshop-console": async (command, _actor, socket) => {
      await socket.join(consoleRoom(command.workshopId));
      return { ok: true, console: await workshops.consoleView(command.workshopId) };
    },
    "update-workshop": async (command) => {
      const { op: _op, workshopId, ...changes } = command;
      await workshops.update(workshopId, changes);
      return { ok: true, console: await workshops.consoleView(workshopId) };
    },
    "workshop-broadcast": async (command) => {
      await workshops.broadcast(command.workshopId, command.message ?? null, command.preset ?? null);
      return { ok: true };
    },
    "my-workshop": async (_command, actor) => ({ ok: true, participantWorkshop: await workshops.participantView(actor.userId) }),
  };
}
