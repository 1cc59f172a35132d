/**
 * The ops of one open notebook (`notebook:command`): cells, runs, the kernel
 * and its assist. Each is declared once: its request, its reply and what it
 * needs of the notebook (op-table.ts).
 */
import { z } from "zod";
import { MAX_CELLS, MAX_ID_CHARS, MAX_SOURCE_CHARS } from "../limits";
import type { NotebookAccessLevel } from "./accounts-model";
import type { NotebookAction } from "./access-needs";
import type { CompletionAnswer, InspectionAnswer } from "./assist-model";
import { cellKind, hostId, id, parameterValues, source } from "./fields";
import type { NotebookDocument } from "./notebook-model";
import { answerOf, nothing, refusalSchema, requestsOf, view, views, type OpTable, type Refusal } from "./op-table";
import type { JournalPosition, SequencedEvent } from "./notebook-events";

/** Why a set-source was refused: the cell's text changed under the edit. */
export interface SourceConflict {
  cellId: string;
  theirSource: string;
}

/** Checks that every op of the table is declared in full (op-table.ts); the table itself stays as written. */
export function defineNotebookOps<T extends OpTable<T, NotebookAction>>(table: T): T {
  return table;
}

/** What a notebook's driver answers to `open` (server/cluster/notebook-drivers.ts); the reply adds the viewer's access. */
const joined = z.object({
  /** A full snapshot (without a usable resume point). */
  notebook: view<NotebookDocument>().optional(),
  /** With a usable resume point: the events after it, in order. */
  missed: views<SequencedEvent>().optional(),
  /** Where the snapshot or `missed` ends; live events continue from seq + 1. */
  journal: view<JournalPosition>(),
});

export const NOTEBOOK_OPS = defineNotebookOps({
  /**
   * Join a notebook. With `resume` (what the client last applied), the reply
   * carries only the events it missed when the server still has them;
   * otherwise a full snapshot. Either way: nothing lost, nothing twice.
   */
  open: {
    request: z.object({
      op: z.literal("open"),
      notebookId: id,
      resume: z.object({ epoch: z.string().max(MAX_ID_CHARS), seq: z.number().int().nonnegative() }).optional(),
    }),
    reply: joined.extend({
      /**
       * What this viewer may do with the notebook ("read": a read-only view); the socket edge adds it to the
       * driver's answer. A server from before accounts said nothing: its only user could do everything.
       */
      access: z.enum(["read", "run", "edit"]).default("edit") satisfies z.ZodType<NotebookAccessLevel, NotebookAccessLevel | undefined>,
    }),
    access: "read",
  },
  "insert-cell": {
    request: z.object({ op: z.literal("insert-cell"), notebookId: id, index: z.number().int().nonnegative(), cell: z.object({ id, kind: cellKind, source }) }),
    reply: nothing,
    access: "edit",
  },
  "delete-cell": { request: z.object({ op: z.literal("delete-cell"), notebookId: id, cellId: id }), reply: nothing, access: "edit" },
  "move-cell": { request: z.object({ op: z.literal("move-cell"), notebookId: id, cellId: id, toIndex: z.number().int().nonnegative() }), reply: nothing, access: "edit" },
  /**
   * `baseHash` is sourceHash() of the source this edit started from. When the
   * cell has changed since (another tab), the edit is refused with a
   * `conflict` instead of overwriting; `force` keeps this edit anyway.
   */
  "set-source": {
    request: z.object({ op: z.literal("set-source"), notebookId: id, cellId: id, source, baseHash: z.string().max(32).optional(), force: z.boolean().optional() }),
    reply: nothing,
    access: "edit",
  },
  "set-kind": { request: z.object({ op: z.literal("set-kind"), notebookId: id, cellId: id, kind: cellKind }), reply: nothing, access: "edit" },
  /**
   * Runs cells from their stored sources: the client saves its edits first
   * (set-source, one cell per message) and sends only ids, so a run of many
   * large cells is never one huge message. `sourceHashes` is sourceHash() of
   * the text the user sees per cell: a cell whose stored text differs (another
   * tab changed it) is refused as a conflict, never run.
   */
  execute: {
    request: z.object({
      op: z.literal("execute"),
      notebookId: id,
      cellIds: z.array(id).min(1).max(MAX_CELLS),
      sourceHashes: z.record(z.string(), z.string().max(32)).optional(),
    }),
    reply: nothing,
    access: "run",
  },
  "clear-outputs": { request: z.object({ op: z.literal("clear-outputs"), notebookId: id, cellIds: z.array(id).max(MAX_CELLS) }), reply: nothing, access: "edit" },
  /**
   * New values for a templated cell's form. The catalog validates them with
   * the scenario's other values and re-renders every attached cell of that
   * scenario; a refused value changes nothing.
   */
  "set-parameters": { request: z.object({ op: z.literal("set-parameters"), notebookId: id, cellId: id, values: parameterValues }), reply: nothing, access: "edit" },
  /** Stop applying the form: the cell becomes freely editable. */
  "detach-template": { request: z.object({ op: z.literal("detach-template"), notebookId: id, cellId: id }), reply: nothing, access: "edit" },
  /** Re-render from the template with the scenario's current values (replaces edits to this cell; `undo-reattach` puts them back). */
  "reattach-template": { request: z.object({ op: z.literal("reattach-template"), notebookId: id, cellId: id }), reply: nothing, access: "edit" },
  /** Undo the last reattach of this cell: the server puts back the detached code and template it replaced. */
  "undo-reattach": { request: z.object({ op: z.literal("undo-reattach"), notebookId: id, cellId: id }), reply: nothing, access: "edit" },
  /** Commit to one of a question's choices before running; kept as committed. */
  "commit-prediction": {
    request: z.object({
      op: z.literal("commit-prediction"),
      notebookId: id,
      questionId: z.string().min(1).max(200).regex(/^[A-Za-z0-9_/-]+$/, "question ids are letters, digits, _, - and /"),
      choice: z.string().min(1).max(2_000),
    }),
    reply: nothing,
    access: "edit",
  },
  interrupt: { request: z.object({ op: z.literal("interrupt"), notebookId: id }), reply: nothing, access: "run" },
  /**
   * Where the notebook's next kernel starts and how many GPUs it leases:
   * checked against the lab's hosts (the host exists; no more GPUs than it
   * has, when known). A running kernel keeps its own until a restart.
   */
  "set-kernel-spec": { request: z.object({ op: z.literal("set-kernel-spec"), notebookId: id, hostId, gpus: z.number().int().min(0).max(1024) }), reply: nothing, access: "edit" },
  /** The viewer's tab was hidden or shown (Page Visibility): a hidden tab does not keep the kernel in use. */
  presence: { request: z.object({ op: z.literal("presence"), notebookId: id, visible: z.boolean() }), reply: nothing, access: "read" },
  restart: { request: z.object({ op: z.literal("restart"), notebookId: id }), reply: nothing, access: "run" },
  shutdown: { request: z.object({ op: z.literal("shutdown"), notebookId: id }), reply: nothing, access: "run" },
  /**
   * Tab in the editor: completions at `cursor` (a UTF-16 offset into `code`,
   * the editor's current text) from the kernel's live namespace; "unavailable"
   * at once while the kernel is busy. Needs "run": attribute access runs user
   * code (properties), as a cell does.
   */
  complete: {
    request: z.object({ op: z.literal("complete"), notebookId: id, code: source, cursor: z.number().int().nonnegative().max(MAX_SOURCE_CHARS) }),
    reply: z.object({ completion: view<CompletionAnswer>() }),
    access: "run",
  },
  /** Shift+Tab: signature and docstring at `cursor` (`detail`: the source too). */
  inspect: {
    request: z.object({ op: z.literal("inspect"), notebookId: id, code: source, cursor: z.number().int().nonnegative().max(MAX_SOURCE_CHARS), detail: z.boolean().optional() }),
    reply: z.object({ inspection: view<InspectionAnswer>() }),
    access: "run",
  },
});

type NotebookOps = typeof NOTEBOOK_OPS;
export type NotebookOp = keyof NotebookOps;
export type NotebookRequest<Op extends NotebookOp> = z.output<NotebookOps[Op]["request"]>;
export type NotebookReply<Op extends NotebookOp> = { ok: true } & z.output<NotebookOps[Op]["reply"]>;
/** A refusal of a set-source may carry the text that changed under it. */
export type NotebookRefusal = Refusal & { conflict?: SourceConflict };
export type NotebookAnswer<Op extends NotebookOp> = NotebookReply<Op> | NotebookRefusal;

export const notebookCommandSchema = z.discriminatedUnion("op", requestsOf(NOTEBOOK_OPS));
export type NotebookCommand = z.infer<typeof notebookCommandSchema>;
export type NotebookCommandOp = NotebookCommand["op"];
/** What `op` takes, with its op spelled out so that a generic `send` infers which reply to expect. */
export type NotebookSend<Op extends NotebookOp> = NotebookRequest<Op> & { op: Op };

const notebookRefusal = refusalSchema.extend({ conflict: z.object({ cellId: z.string(), theirSource: z.string() }).optional() });

/** Each op's reply schema, typed by its op (so a lookup by a generic op keeps the op's own type). */
const NOTEBOOK_REPLIES: { readonly [Op in NotebookOp]: { readonly reply: z.ZodType<z.output<NotebookOps[Op]["reply"]>> } } = NOTEBOOK_OPS;

/** What arrived as the answer to `op`, as `op` declares it (op-table.ts: answerOf). */
export function notebookAnswerOf<Op extends NotebookOp>(op: Op, wire: unknown): NotebookAnswer<Op> {
  return answerOf(op, NOTEBOOK_REPLIES[op].reply, notebookRefusal, wire);
}

/** What the notebook's driver answers to `op`: the reply, less the viewer's access on `open` (the socket edge knows it). */
type DriverBody<Op extends NotebookOp> = Op extends "open" ? z.output<typeof joined> : z.output<NotebookOps[Op]["reply"]>;
export type DriverReply<Op extends NotebookOp> = { ok: true } & DriverBody<Op>;
export type DriverAnswer<Op extends NotebookOp> = DriverReply<Op> | NotebookRefusal;

const DRIVER_REPLIES: { readonly [Op in NotebookOp]: { readonly reply: z.ZodType<DriverBody<Op>> } } = { ...NOTEBOOK_OPS, open: { reply: joined } };

/** A driver's answer from another lab server, as `op` declares it. */
export function driverAnswerOf<Op extends NotebookOp>(op: Op, wire: unknown): DriverAnswer<Op> {
  return answerOf(op, DRIVER_REPLIES[op].reply, notebookRefusal, wire);
}

/** Whether `op` names a notebook op. */
export function isNotebookOp(op: string): op is NotebookOp {
  return Object.hasOwn(NOTEBOOK_OPS, op);
}
