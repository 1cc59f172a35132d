/**
 * The browser ↔ server protocol over socket.io: two command events with an
 * acknowledgement (their ops are declared in ops-notebook.ts and ops-lab.ts,
 * each with its request, reply and access need) and one event stream, a
 * tagged union so a new event breaks the build until both ends handle it.
 */
import { MAX_MESSAGE_BYTES, MAX_SOURCE_CHARS } from "../limits";
import type { SessionEndReason } from "./accounts-model";
import type { DevicePlan } from "./kernel-messages";
import type { MetricPointMessage } from "./metrics-model";
import type { Cell, CellOutput, CellRunState, CellTemplate, KernelSpec, KernelStatus, LiveMetrics, Prediction } from "./notebook-model";
import type { NotebookAnswer, NotebookOp } from "./ops-notebook";
import type { LabAnswer, LabOp } from "./ops-lab";
import type { ParticipantWorkshopView, WorkshopConsoleView } from "./workshop-model";

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

/** Position in a notebook's event journal. `epoch` changes when the server's journal restarts. */
export interface JournalPosition {
  epoch: string;
  seq: number;
}

export interface SequencedEvent {
  seq: number;
  event: NotebookEvent;
}

/** HTTP routes for files (bodies too large for a socket message). */
export const NOTEBOOK_IMPORT_PATH = "/api/notebooks/import";
export const notebookExportPath = (notebookId: string): string => `/api/notebooks/${encodeURIComponent(notebookId)}/export`;
/** The class summary as CSV: predictions against measurements per claim, one row per participant and question. */
export const workshopSummaryPath = (workshopId: string): string => `/api/workshops/${encodeURIComponent(workshopId)}/summary.csv`;

/** Everything the server tells a viewer of a notebook, in order. */
export type NotebookEvent =
  | { type: "cell-inserted"; index: number; cell: Cell }
  | { type: "cell-deleted"; cellId: string }
  | { type: "cell-moved"; cellId: string; toIndex: number }
  | { type: "cell-source"; cellId: string; source: string; by: string }
  | { type: "cell-kind"; cellId: string; kind: Cell["kind"] }
  /** `executionId` names the execution that is queued or running (or ran last): live metric points carry it. */
  | { type: "cell-run-state"; cellId: string; runState: CellRunState; executionCount: number | null; executionId: string | null }
  /** A templated cell re-rendered, detached or reattached: its template and source together. */
  | { type: "cell-template"; cellId: string; template: CellTemplate | null; source: string }
  | { type: "prediction-committed"; prediction: Prediction }
  | { type: "cell-outputs-cleared"; cellId: string }
  | { type: "cell-output"; cellId: string; output: CellOutput }
  /** Append to the last stream output of that name (or start one). */
  | { type: "cell-stream"; cellId: string; name: "stdout" | "stderr"; text: string }
  /**
   * Output went past the head budget: the cell's first `headOutputs` outputs
   * stay; everything after them is replaced by an elided marker (when
   * `elidedBytes` > 0) and this tail (see replaceTail in core/notebook).
   */
  | { type: "cell-stream-tail"; cellId: string; elidedBytes: number; tail: Array<{ name: "stdout" | "stderr"; text: string }>; headOutputs: number }
  | { type: "cell-finished"; cellId: string; status: NonNullable<Cell["lastRun"]>["status"]; durationMs: number }
  /** Coalesced, a few times a second while a run logs metrics. */
  | { type: "cell-metrics"; cellId: string; liveMetrics: LiveMetrics }
  /** The metric messages themselves, batched, for live charts. */
  | { type: "cell-metric-points"; cellId: string; executionId: string; points: MetricPointMessage[] }
  /** The devices one variant (metric tag, "" untagged) of an execution ran on: the charts name them. */
  | { type: "cell-device-plan"; cellId: string; executionId: string; tag: string; plan: DevicePlan }
  | { type: "kernel-status"; status: KernelStatus }
  /** The next kernel start's host and GPUs. */
  | { type: "kernel-spec-changed"; spec: KernelSpec }
  /** Idle shutdown will end the kernel at `shutdownAt` (ISO time) unless it is used; null: the warning no longer holds. */
  | { type: "kernel-idle-warning"; shutdownAt: string | null }
  | { type: "notebook-renamed"; title: string }
  | { type: "notebook-deleted" }
  | { type: "notebook-restored" };

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
