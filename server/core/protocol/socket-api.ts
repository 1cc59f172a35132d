/**
 * The browser ↔ server protocol over socket.io: two command events with an
 * acknowledgement (their ops are declared in ops-notebook.ts and ops-lab.ts,
 * each with its request, reply and access need) and one event stream
 * (notebook-events.ts), a tagged union so a new event breaks the build until
 * both ends handle it.
 */
import { MAX_MESSAGE_BYTES, MAX_SOURCE_CHARS } from "../limits";
import type { SessionEndReason } from "./accounts-model";
import type { NotebookEvent } from "./notebook-events";
import type { NotebookAnswer, NotebookOp } from "./ops-notebook";
import type { LabAnswer, LabOp } from "./ops-lab";
import type { ParticipantWorkshopView, WorkshopConsoleView } from "./workshop-model";

export type { JournalPosition, NotebookEvent, SequencedEvent } from "./notebook-events";
export { notebookCommandSchema, type NotebookCommand, type NotebookCommandOp, type SourceConflict } from "./ops-notebook";
export { labCommandSchema, MAX_WORKSHOP_CAPACITY, type LabCommand } from "./ops-lab";

/** Why `message` cannot be sent (its JSON is over MAX_MESSAGE_BYTES), or null. */
export function messageTooLarge(message: unknown): string | null {
  const json = JSON.stringify(message) ?? "";
  // Cheap bound first: a UTF-16 unit never takes more than 3 UTF-8 bytes.
  if (json.length * 3 <= MAX_MESSAGE_BYTES) return null;
  const bytes = new TextEncoder().encode(json).length;
  if (bytes <= MAX_MESSAGE_BYTES) return null;
  return `this change is ${(bytes / 2 ** 20).toFixed(1)} MiB, over the ${(MAX_MESSAGE_BYTES / 2 ** 20).toFixed(0)} MiB a message may carry; a cell holds at most ${MAX_SOURCE_CHARS.toLocaleString("en")} characters`;
}

/** HTTP routes for files (bodies too large for a socket message). */
export const NOTEBOOK_IMPORT_PATH = "/api/notebooks/import";
export const notebookExportPath = (notebookId: string): string => `/api/notebooks/${encodeURIComponent(notebookId)}/export`;
/** The class summary as CSV: predictions against measurements per claim, one row per participant and question. */
export const workshopSummaryPath = (workshopId: string): string => `/api/workshops/${encodeURIComponent(workshopId)}/summary.csv`;

export interface ServerToClientEvents {
  /** This connection's session ended (signed out, expired, user removed): the server disconnects right after. */
  "session:ended": (reason: SessionEndReason) => void;
  /**
   * Events of one notebook, in order: `events[i]` has number `firstSeq + i`.
   * Numbers increase by one per event of that notebook; a gap means resync
   * with `open` + `resume`. One batch per commit (server/socket/notebook-events.ts).
   */
  "notebook:events": (notebookId: string, firstSeq: number, events: NotebookEvent[]) => void;
  /**
   * Events of this notebook (null: of any) may not have reached this
   * connection: another lab server took the notebook over (a new journal),
   * or the servers lost Redis for a while. Re-open with `resume`.
   */
  "lab:resync": (notebookId: string | null) => void;
  /** To a facilitator's console (after `workshop-console`): the whole view, at most a few times a second. */
  "workshop:console": (workshopId: string, view: WorkshopConsoleView) => void;
  /** To a participant (after `my-workshop`): their workshop changed (admitted, a broadcast, a step revealed, ended). */
  "workshop:participant": (view: ParticipantWorkshopView) => void;
}

export interface ClientToServerEvents {
  "notebook:command": (command: unknown, ack: (reply: NotebookAnswer<NotebookOp>) => void) => void;
  "lab:command": (command: unknown, ack: (reply: LabAnswer<LabOp>) => void) => void;
}
