/**
 * Typed code is never lost: the bookkeeping behind that promise, as pure
 * functions (the socket wrapper in connection.ts only calls them).
 *
 * - Every local edit of a cell's source is recorded as a pending edit with a
 *   revision number; the debounced `set-source` carries that revision and its
 *   acknowledgement clears the entry only if no newer edit came since.
 * - Structural commands (insert, delete, move, set-kind, clear-outputs) wait
 *   in an outbox until acknowledged.
 * - What the page shows is always `rebase(server's document, outbox,
 *   pending)`: the outbox replayed onto the client's copy of the server's
 *   document, then pending sources winning over its text. The same function
 *   serves a live event and the `open` snapshot after a reconnect. Cells the
 *   server no longer has (a restart that lost the notebook, a delete by
 *   another viewer) are re-inserted rather than dropped.
 * - The pending map is also the localStorage draft: it survives a reload in
 *   the middle of an outage. Drafts are parsed with a schema, never trusted.
 * - Every pending edit remembers its base: the hash of the server's text it
 *   was typed on (the snapshot, another tab's `cell-source`, or our own last
 *   acknowledged edit). The server refuses an edit whose base is stale with a
 *   conflict instead of overwriting another tab's text; the user then picks
 *   "use theirs" (forget the edit) or "keep mine" (`force` it).
 */
import { z } from "zod";
import type { CellKind, NotebookDocument } from "../../../server/core/protocol/notebook-model";
import type { NotebookCommand } from "../../../server/core/protocol/socket-api";
import type { NotebookAnswer } from "../../../server/core/protocol/ops-notebook";
import { sourceHash } from "../../../server/core/protocol/source-hash";
import { applyLocalAction, newCell, type LocalAction } from "../../../server/core/notebook/notebook-state";

export interface PendingEdit {
  source: string;
  /** Grows with every local edit of this cell; acknowledgements name the revision they confirm. */
  rev: number;
  /** Enough to re-create the cell if the server has lost it. */
  kind: CellKind;
  index: number;
  /**
   * `sourceHash` of the server's text this edit was made on, sent as
   * `baseHash`; null when unknown (a draft from before bases were kept),
   * then the edit is sent without one.
   */
  base: string | null;
  /** The user chose "keep mine" over a conflicting change: the next send overwrites it. */
  force?: true;
}

export type PendingEdits = Readonly<Record<string, PendingEdit>>;

/** Commands that change the document's structure; they wait in the outbox until acknowledged. */
export type StructuralCommand = Extract<
  NotebookCommand,
  { op: "insert-cell" | "delete-cell" | "move-cell" | "set-kind" | "clear-outputs" }
>;

/**
 * Record a local edit. `base` is the server text the edit was typed on; it
 * counts only for the first edit of a cell with nothing pending (later edits
 * build on the same base). `rev` should come from a counter that never
 * repeats for this notebook (so an old acknowledgement can never clear newer
 * text); by default it is one more than the cell's current revision.
 */
export function recordEdit(
  pending: PendingEdits,
  cellId: string,
  edit: { source: string; kind: CellKind; index: number; base: string | null },
  rev: number = (pending[cellId]?.rev ?? 0) + 1,
): PendingEdits {
  const previous = pending[cellId];
  const entry: PendingEdit =
    previous === undefined
      ? { source: edit.source, kind: edit.kind, index: edit.index, base: edit.base, rev }
      : { ...previous, source: edit.source, kind: edit.kind, index: edit.index, rev };
  return { ...pending, [cellId]: entry };
}

/** The highest revision in a set of pending edits (to resume a counter from a draft). */
export function maxRev(pending: PendingEdits): number {
  return Object.values(pending).reduce((max, e) => Math.max(max, e.rev), 0);
}

/**
 * The server saved revision `rev` of this cell, whose text was `saved`.
 * Forget the edit, unless the user typed since: then the newer text stays
 * pending, now based on what the server has (our own saved text).
 */
export function acknowledgeEdit(pending: PendingEdits, cellId: string, rev: number, saved: string): PendingEdits {
  const entry = pending[cellId];
  if (entry === undefined) return pending;
  if (entry.rev === rev) return forgetCell(pending, cellId);
  const { force: _force, ...rest } = entry;
  return { ...pending, [cellId]: { ...rest, base: sourceHash(saved) } };
}

/**
 * The server's text of this cell turned out to be one this page sent itself
 * (a write that landed but whose answer was lost: a server killed after its
 * commit, a dropped connection): newer text typed since is based on it, so
 * it is sent as a plain edit of our own text, not a conflict with another tab.
 */
export function rebaseOnOwnWrite(pending: PendingEdits, cellId: string, landed: string): PendingEdits {
  const entry = pending[cellId];
  if (entry === undefined) return pending;
  return { ...pending, [cellId]: { ...entry, base: sourceHash(landed) } };
}

/**
 * "Keep mine" after a conflict: the edit is re-based on the text it collided
 * with and sent with `force`, so it replaces that text.
 */
export function keepMine(pending: PendingEdits, cellId: string, theirSource: string): PendingEdits {
  const entry = pending[cellId];
  if (entry === undefined) return pending;
  return { ...pending, [cellId]: { ...entry, base: sourceHash(theirSource), force: true } };
}

/** The `set-source` command that saves a pending edit. */
export function setSourceCommand(notebookId: string, cellId: string, edit: PendingEdit): Extract<NotebookCommand, { op: "set-source" }> {
  return {
    op: "set-source",
    notebookId,
    cellId,
    source: edit.source,
    ...(edit.base === null ? {} : { baseHash: edit.base }),
    ...(edit.force === true ? { force: true } : {}),
  };
}

/** What the answer to a `set-source` means for the edit it carried. */
export type SourceReplyOutcome =
  | { kind: "saved" }
  | { kind: "conflict"; theirSource: string }
  | { kind: "refused"; error: string }
  /** No answer (not connected, timed out, link dropped): send again later. */
  | { kind: "lost"; error: string };

export function classifySourceReply(reply: NotebookAnswer<"set-source"> | { ok: false; error: string; lost: true }, sent: string): SourceReplyOutcome {
  if (reply.ok) return { kind: "saved" };
  if ("lost" in reply) return { kind: "lost", error: reply.error };
  if (reply.conflict !== undefined) {
    // The server already has exactly this text (our earlier send landed but its ack was lost): saved.
    if (reply.conflict.theirSource === sent) return { kind: "saved" };
    return { kind: "conflict", theirSource: reply.conflict.theirSource };
  }
  return { kind: "refused", error: reply.error };
}

/** The user deleted the cell: its pending text goes with it. */
export function forgetCell(pending: PendingEdits, cellId: string): PendingEdits {
  if (!(cellId in pending)) return pending;
  const { [cellId]: _dropped, ...rest } = pending;
  return rest;
}

export interface RebaseResult {
  /** What the page shows: the server's document with our unacknowledged changes on top. */
  doc: NotebookDocument;
  /**
   * Cells with pending text that neither the server's document nor the outbox
   * has (the server lost them, or another viewer deleted them): the caller
   * sends these inserts, so the typed code survives.
   */
  reinserts: StructuralCommand[];
}

export function rebase(
  serverDoc: NotebookDocument,
  outbox: readonly StructuralCommand[],
  pending: PendingEdits,
): RebaseResult {
  let doc = serverDoc;
  for (const command of outbox) doc = applyLocalAction(doc, commandToAction(command));
  const reinserts: StructuralCommand[] = [];
  const entries = Object.entries(pending).sort(([, a], [, b]) => a.index - b.index);
  for (const [cellId, edit] of entries) {
    if (!doc.cells.some((c) => c.id === cellId)) {
      const insert: StructuralCommand = {
        op: "insert-cell",
        notebookId: serverDoc.id,
        index: Math.min(edit.index, doc.cells.length),
        cell: { id: cellId, kind: edit.kind, source: edit.source },
      };
      doc = applyLocalAction(doc, commandToAction(insert));
      reinserts.push(insert);
    } else {
      doc = applyLocalAction(doc, { type: "set-source", cellId, source: edit.source });
    }
  }
  return { doc, reinserts };
}

/** The optimistic local effect of a structural command. */
export function commandToAction(command: StructuralCommand): LocalAction {
  switch (command.op) {
    case "insert-cell":
      return { type: "insert-cell", index: command.index, cell: newCell(command.cell.id, command.cell.kind, command.cell.source) };
    case "delete-cell":
      return { type: "delete-cell", cellId: command.cellId };
    case "move-cell":
      return { type: "move-cell", cellId: command.cellId, toIndex: command.toIndex };
    case "set-kind":
      return { type: "set-kind", cellId: command.cellId, kind: command.kind };
    case "clear-outputs":
      return { type: "clear-outputs", cellIds: command.cellIds };
  }
}

// ---- localStorage draft ----------------------------------------------------

const DRAFT_VERSION = 2;

const draftEdit = z.object({
  source: z.string(),
  rev: z.number().int().nonnegative(),
  kind: z.enum(["code", "markdown"]),
  index: z.number().int().nonnegative(),
});

const draftSchema = z.discriminatedUnion("version", [
  z.object({ version: z.literal(1), notebookId: z.string(), savedAt: z.number(), edits: z.record(z.string(), draftEdit) }),
  z.object({
    version: z.literal(DRAFT_VERSION),
    notebookId: z.string(),
    savedAt: z.number(),
    edits: z.record(
      z.string(),
      draftEdit.extend({ base: z.string().max(32).nullable(), force: z.literal(true).optional() }),
    ),
  }),
]);

/**
 * Several tabs may have the same notebook open and share one draft. A tab
 * writes its own view of the cells it has touched (edited, saved, deleted)
 * and leaves every other cell's stored entry as it found it, so closing one
 * tab never erases another tab's unsaved text.
 */
export function mergeDraft(stored: PendingEdits, mine: PendingEdits, touched: ReadonlySet<string>): PendingEdits {
  const merged: Record<string, PendingEdit> = {};
  for (const [cellId, edit] of Object.entries(stored)) if (!touched.has(cellId)) merged[cellId] = edit;
  return { ...merged, ...mine };
}

export function draftKey(notebookId: string): string {
  return `mgpulab:draft:${notebookId}`;
}

export function serializeDraft(notebookId: string, pending: PendingEdits, now: number): string | null {
  if (Object.keys(pending).length === 0) return null;
  return JSON.stringify({ version: DRAFT_VERSION, notebookId, savedAt: now, edits: pending });
}

/** A stored draft, or no edits if it is missing, corrupt, or for another notebook. */
export function parseDraft(notebookId: string, stored: string | null): PendingEdits {
  if (stored === null) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(stored);
  } catch (err) {
    if (err instanceof SyntaxError) return {};
    throw err;
  }
  const parsed = draftSchema.safeParse(raw);
  if (!parsed.success || parsed.data.notebookId !== notebookId) return {};
  const draft = parsed.data;
  if (draft.version === DRAFT_VERSION) return draft.edits;
  // A version-1 draft does not know what its edits were based on.
  const edits: Record<string, PendingEdit> = {};
  for (const [cellId, edit] of Object.entries(draft.edits)) edits[cellId] = { ...edit, base: null };
  return edits;
}
