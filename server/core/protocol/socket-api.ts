/**
 * The browser ↔ server protocol over socket.io. One command event with an
 * acknowledgement, one event stream; both are tagged unions so a new message
 * breaks the build until both ends handle it. Incoming commands are validated
 * with `notebookCommandSchema` before anything acts on them.
 */
import { z } from "zod";
import type { ErrorCode } from "../errors";
import { MAX_CELLS, MAX_ID_CHARS, MAX_MESSAGE_BYTES, MAX_SOURCE_CHARS, MAX_TITLE_CHARS } from "../limits";
import { ACCOUNT_ROLES, type Me, type NotebookAccessLevel, type SessionEndReason, type ShareView, type UserView, type WorkshopView } from "./accounts-model";
import type { CompletionAnswer, InspectionAnswer } from "./assist-model";
import type { DevicePlan } from "./kernel-messages";
import type { HostView } from "./hosts-model";
import type { KernelListing } from "./kernels-model";
import type { MetricPointMessage } from "./metrics-model";
import type { Cell, CellOutput, CellRunState, CellTemplate, KernelSpec, KernelStatus, LiveMetrics, NotebookDocument, NotebookListItem, Prediction, ScenarioSummary } from "./notebook-model";
import { WORKSHOP_PACES, type ParticipantWorkshopView, type WorkshopConsoleView } from "./workshop-model";

/** Why `message` cannot be sent (its JSON is over MAX_MESSAGE_BYTES), or null. */
export function messageTooLarge(message: unknown): string | null {
  const json = JSON.stringify(message) ?? "";
  // Cheap bound first: a UTF-16 unit never takes more than 3 UTF-8 bytes.
  if (json.length * 3 <= MAX_MESSAGE_BYTES) return null;
  const bytes = new TextEncoder().encode(json).length;
  if (bytes <= MAX_MESSAGE_BYTES) return null;
  return `this change is ${(bytes / 2 ** 20).toFixed(1)} MiB, over the ${(MAX_MESSAGE_BYTES / 2 ** 20).toFixed(0)} MiB a message may carry; a cell holds at most ${MAX_SOURCE_CHARS.toLocaleString("en")} characters`;
}

const id = z.string().min(1).max(MAX_ID_CHARS).regex(/^[A-Za-z0-9_-]+$/, "ids are letters, digits, _ and -");
/** A configured host's id (part of its agent's id, so plain like every id); the lab checks that it exists. */
const hostId = id;
const cellKind = z.enum(["code", "markdown"]);
/** Form values: identifiers to plain scalars (strings short), at most a few dozen. */
const parameterValues = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "parameter names are identifiers"),
    z.union([z.string().max(200), z.number(), z.boolean()]),
  )
  .refine((values) => Object.keys(values).length <= 64, "at most 64 parameters");
const source = z.string().max(MAX_SOURCE_CHARS, `a cell holds at most ${MAX_SOURCE_CHARS} characters`);

export const notebookCommandSchema = z.discriminatedUnion("op", [
  /**
   * Join a notebook. With `resume` (what the client last applied), the reply
   * carries only the events it missed when the server still has them;
   * otherwise a full snapshot. Either way: nothing lost, nothing twice.
   */
  z.object({
    op: z.literal("open"),
    notebookId: id,
    resume: z.object({ epoch: z.string().max(MAX_ID_CHARS), seq: z.number().int().nonnegative() }).optional(),
  }),
  z.object({
    op: z.literal("insert-cell"),
    notebookId: id,
    index: z.number().int().nonnegative(),
    cell: z.object({ id, kind: cellKind, source }),
  }),
  z.object({ op: z.literal("delete-cell"), notebookId: id, cellId: id }),
  z.object({ op: z.literal("move-cell"), notebookId: id, cellId: id, toIndex: z.number().int().nonnegative() }),
  /**
   * `baseHash` is sourceHash() of the source this edit started from. When the
   * cell has changed since (another tab), the edit is refused with a
   * `conflict` instead of overwriting; `force` keeps this edit anyway.
   */
  z.object({
    op: z.literal("set-source"),
    notebookId: id,
    cellId: id,
    source,
    baseHash: z.string().max(32).optional(),
    force: z.boolean().optional(),
  }),
  z.object({ op: z.literal("set-kind"), notebookId: id, cellId: id, kind: cellKind }),
  /**
   * Runs cells from their stored sources: the client saves its edits first
   * (set-source, one cell per message) and sends only ids, so a run of many
   * large cells is never one huge message. `sourceHashes` is sourceHash() of
   * the text the user sees per cell: a cell whose stored text differs (another
   * tab changed it) is refused as a conflict, never run.
   */
  z.object({
    op: z.literal("execute"),
    notebookId: id,
    cellIds: z.array(id).min(1).max(MAX_CELLS),
    sourceHashes: z.record(z.string(), z.string().max(32)).optional(),
  }),
  z.object({ op: z.literal("clear-outputs"), notebookId: id, cellIds: z.array(id).max(MAX_CELLS) }),
  /**
   * New values for a templated cell's form. The catalog validates them with
   * the scenario's other values and re-renders every attached cell of that
   * scenario; a refused value changes nothing.
   */
  z.object({ op: z.literal("set-parameters"), notebookId: id, cellId: id, values: parameterValues }),
  /** Stop applying the form: the cell becomes freely editable. */
  z.object({ op: z.literal("detach-template"), notebookId: id, cellId: id }),
  /** Re-render from the template with the scenario's current values (replaces edits to this cell; `undo-reattach` puts them back). */
  z.object({ op: z.literal("reattach-template"), notebookId: id, cellId: id }),
  /** Undo the last reattach of this cell: the server puts back the detached code and template it replaced. */
  z.object({ op: z.literal("undo-reattach"), notebookId: id, cellId: id }),
  /** Commit to one of a question's choices before running; kept as committed. */
  z.object({
    op: z.literal("commit-prediction"),
    notebookId: id,
    questionId: z.string().min(1).max(200).regex(/^[A-Za-z0-9_/-]+$/, "question ids are letters, digits, _, - and /"),
    choice: z.string().min(1).max(2_000),
  }),
  z.object({ op: z.literal("interrupt"), notebookId: id }),
  /**
   * Where the notebook's next kernel starts and how many GPUs it leases:
   * checked against the lab's hosts (the host exists; no more GPUs than it
   * has, when known). A running kernel keeps its own until a restart.
   */
  z.object({ op: z.literal("set-kernel-spec"), notebookId: id, hostId, gpus: z.number().int().min(0).max(1024) }),
  /** The viewer's tab was hidden or shown (Page Visibility): a hidden tab does not keep the kernel in use. */
  z.object({ op: z.literal("presence"), notebookId: id, visible: z.boolean() }),
  z.object({ op: z.literal("restart"), notebookId: id }),
  z.object({ op: z.literal("shutdown"), notebookId: id }),
  /**
   * Tab in the editor: completions at `cursor` (a UTF-16 offset into `code`,
   * the editor's current text) from the kernel's live namespace. Answered in
   * the ack (`completion`); "unavailable" at once while the kernel is busy.
   * Needs "run": attribute access runs user code (properties).
   */
  z.object({ op: z.literal("complete"), notebookId: id, code: source, cursor: z.number().int().nonnegative().max(MAX_SOURCE_CHARS) }),
  /** Shift+Tab: signature and docstring at `cursor` (`detail`: the source too), answered in the ack (`inspection`). */
  z.object({ op: z.literal("inspect"), notebookId: id, code: source, cursor: z.number().int().nonnegative().max(MAX_SOURCE_CHARS), detail: z.boolean().optional() }),
]);

export type NotebookCommand = z.infer<typeof notebookCommandSchema>;
export type NotebookCommandOp = NotebookCommand["op"];

/** Position in a notebook's event journal. `epoch` changes when the server's journal restarts. */
export interface JournalPosition {
  epoch: string;
  seq: number;
}

export interface SequencedEvent {
  seq: number;
  event: NotebookEvent;
}

/** Why a set-source was refused: the cell's text changed under the edit. */
export interface SourceConflict {
  cellId: string;
  theirSource: string;
}

export type CommandAck =
  | {
      ok: true;
      /** A full snapshot (on open without a usable resume point). */
      notebook?: NotebookDocument;
      /** On open with a usable resume point: the events after it, in order. */
      missed?: SequencedEvent[];
      /** On open: where the snapshot or `missed` ends; live events continue from seq + 1. */
      journal?: JournalPosition;
      /** On open: what this viewer may do with the notebook ("read": a read-only view). */
      access?: NotebookAccessLevel;
      /** On complete. */
      completion?: CompletionAnswer;
      /** On inspect. */
      inspection?: InspectionAnswer;
    }
  /** `code` says what kind of failure it is (branch on it); `error` says it in words for the user. */
  | { ok: false; error: string; code: ErrorCode; conflict?: SourceConflict };

/** The most participants one workshop admits at once. */
export const MAX_WORKSHOP_CAPACITY = 500;
const isoTime = z.iso.datetime({ offset: true, message: "times are ISO 8601 with a zone, e.g. 2026-11-26T09:00:00Z" });

const title = z.string().trim().min(1, "a title is needed").max(MAX_TITLE_CHARS, `a title has at most ${MAX_TITLE_CHARS} characters`);

/** Notebook-list operations: not tied to an open notebook. */
export const labCommandSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("list-notebooks"), state: z.enum(["active", "deleted"]).optional() }),
  /** Without a title the notebook is "Untitled" (or "Untitled (1)", … when the owner has one already), renamed in place later. */
  z.object({ op: z.literal("create-notebook"), title: title.optional() }),
  z.object({ op: z.literal("rename-notebook"), notebookId: id, title }),
  z.object({ op: z.literal("duplicate-notebook"), notebookId: id }),
  /** Soft delete: `restore-notebook` undoes it. */
  z.object({ op: z.literal("delete-notebook"), notebookId: id }),
  z.object({ op: z.literal("restore-notebook"), notebookId: id }),
  z.object({ op: z.literal("list-scenarios") }),
  /**
   * Before opening a scenario: the user's most recently edited copy of it
   * (`notebook`, absent when there is none) and the title a fresh copy would get (`freshTitle`).
   */
  z.object({ op: z.literal("find-scenario-copy"), scenarioId: id }),
  /**
   * A new notebook from a scenario, titled so that no other notebook has its
   * title ("… (2)"); `params` are checked by the catalog (type, range) before anything is created.
   */
  z.object({
    op: z.literal("create-from-scenario"),
    scenarioId: id,
    params: parameterValues.optional(),
  }),
  /** The Running kernels view: every live kernel of this server, with its processes' memory. */
  z.object({ op: z.literal("list-kernels") }),
  /** Ends a notebook's kernel (the notebook stays as it is); answered with the new list. */
  z.object({ op: z.literal("shutdown-kernel"), notebookId: id }),
  /** Ends a listed kernel whose notebook the viewer may not name (an admin's list), by its opaque ref. */
  z.object({ op: z.literal("shutdown-listed-kernel"), kernelRef: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/) }),
  z.object({ op: z.literal("shutdown-all-kernels") }),
  /** The hosts page: every configured host, its link, agent, interpreter and GPUs (connected ones asked briefly; others as last seen). */
  z.object({ op: z.literal("list-hosts") }),
  /** Connects to one host now (starting its agent) and asks its health; answered with its view, unreachable or not. */
  z.object({ op: z.literal("check-host"), hostId }),
  /** Who this session is, and what their role lets the pages offer. */
  z.object({ op: z.literal("whoami") }),
  /** Admin: the lab's users. */
  z.object({ op: z.literal("list-users") }),
  z.object({ op: z.literal("create-user"), name: z.string().max(200), email: z.string().max(320), password: z.string().max(200), role: z.enum(ACCOUNT_ROLES) }),
  z.object({ op: z.literal("set-user-role"), userId: id, role: z.enum(ACCOUNT_ROLES) }),
  /** Ends the user's sessions at once (their open tabs are disconnected); their notebooks stay. */
  z.object({ op: z.literal("remove-user"), userId: id }),
  /** Admin: a new password for a user who has one; their sessions end (they sign in with the new one). */
  z.object({ op: z.literal("set-user-password"), userId: id, password: z.string().max(200) }),
  /** The owner: who this notebook is shared with. */
  z.object({ op: z.literal("list-shares"), notebookId: id }),
  /** The owner shares with a user by e-mail for "read" or "run", or stops sharing ("none"); answered with the shares. */
  z.object({ op: z.literal("share-notebook"), notebookId: id, email: z.string().max(320), access: z.enum(["read", "run", "none"]) }),
  /** Facilitator: their workshops with participants and their copies. */
  z.object({ op: z.literal("list-workshops") }),
  /**
   * Facilitator: a workshop from scenarios; answered with its join code.
   * Times are ISO strings (none: it starts now and ends when ended); the plan
   * says where participants' kernels run and how many are in at once.
   */
  z.object({
    op: z.literal("create-workshop"),
    title,
    scenarioIds: z.array(id).min(1).max(20),
    startsAt: isoTime.optional(),
    endsAt: isoTime.optional(),
    capacity: z.number().int().min(1).max(MAX_WORKSHOP_CAPACITY).optional(),
    hostId: hostId.optional(),
    gpusPerParticipant: z.number().int().min(0).max(64).optional(),
    pace: z.enum(WORKSHOP_PACES).optional(),
  }),
  /** Facilitator: the console's view of their workshop; this connection then gets `workshop:console` on every change (ask again after a reconnect: a new connection is in no console's room). */
  z.object({ op: z.literal("workshop-console"), workshopId: id }),
  /**
   * Facilitator: change a running workshop. `closed` closes (or reopens) the
   * room to new joiners; `revealedSteps` with pace "led" reveals steps to
   * everyone; `end` ends it now (kernels shut down, notebooks read-only).
   */
  z.object({
    op: z.literal("update-workshop"),
    workshopId: id,
    closed: z.boolean().optional(),
    capacity: z.number().int().min(1).max(MAX_WORKSHOP_CAPACITY).optional(),
    pace: z.enum(WORKSHOP_PACES).optional(),
    revealedSteps: z.number().int().min(1).max(1_000).optional(),
    endsAt: isoTime.nullable().optional(),
    end: z.literal(true).optional(),
  }),
  /** Facilitator: a message, a parameter preset, or both, to every participant (each chooses to apply a preset). */
  z
    .object({
      op: z.literal("workshop-broadcast"),
      workshopId: id,
      message: z.string().trim().min(1).max(2_000).optional(),
      preset: z.object({ scenarioId: id, values: parameterValues }).optional(),
    })
    .refine((command) => command.message !== undefined || command.preset !== undefined, "a broadcast needs a message or a preset"),
  /** Restart a notebook's kernel without opening it (the console restarting one participant's kernel). */
  z.object({ op: z.literal("restart-kernel"), notebookId: id }),
  /** Participant: their workshop (admission, pace, broadcasts). Every connection of a participant gets `workshop:participant` on every change; this answer is for a page that just opened. */
  z.object({ op: z.literal("my-workshop") }),
]);
export type LabCommand = z.infer<typeof labCommandSchema>;

export type LabAck =
  | {
      ok: true;
      notebooks?: NotebookListItem[];
      notebook?: NotebookListItem;
      scenarios?: ScenarioSummary[];
      kernels?: KernelListing;
      freshTitle?: string;
      hosts?: HostView[];
      host?: HostView;
      me?: Me;
      users?: UserView[];
      user?: UserView;
      shares?: ShareView[];
      workshops?: WorkshopView[];
      workshop?: WorkshopView;
      console?: WorkshopConsoleView;
      participantWorkshop?: ParticipantWorkshopView;
    }
  | { ok: false; error: string; code: ErrorCode };

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
  "notebook:command": (command: unknown, ack: (reply: CommandAck) => void) => void;
  "lab:command": (command: unknown, ack: (reply: LabAck) => void) => void;
}
