/**
 * The server's rules for structural edits of a notebook document: each
 * checks a command against the document and returns the events that carry
 * it out, or throws a CommandError (a code and a message for the user). Pure: the
 * runtime applies the events with the one document reducer
 * (core/notebook/notebook-state.ts) and sends them to the viewers.
 */
import { MAX_CELLS } from "../core/limits";
import type { Cell, CellKind, NotebookDocument } from "../core/protocol/notebook-model";
import type { NotebookEvent } from "../core/protocol/socket-api";
import { CommandError } from "../errors";

type EventOf<T extends NotebookEvent["type"]> = Extract<NotebookEvent, { type: T }>;

export function findCell(doc: NotebookDocument, cellId: string): Cell {
  const cell = doc.cells.find((candidate) => candidate.id === cellId);
  if (!cell) throw new CommandError("not-found", `no cell ${cellId} in notebook ${doc.id}`);
  return cell;
}

export function insertCell(doc: NotebookDocument, index: number, cell: Cell): EventOf<"cell-inserted"> {
  if (doc.cells.length >= MAX_CELLS) throw new CommandError("limit", `a notebook holds at most ${MAX_CELLS} cells`);
  if (doc.cells.some((existing) => existing.id === cell.id)) throw new CommandError("conflict", `cell ${cell.id} already exists`);
  return { type: "cell-inserted", index: Math.min(index, doc.cells.length), cell };
}

export function deleteCell(doc: NotebookDocument, cellId: string): EventOf<"cell-deleted"> {
  const cell = findCell(doc, cellId);
  if (cell.runState !== "idle") throw new CommandError("busy", "a queued or running cell cannot be deleted; interrupt it first");
  return { type: "cell-deleted", cellId };
}

/** `toIndex` is where the cell ends up, counted without it (at most the last place). */
export function moveCell(doc: NotebookDocument, cellId: string, toIndex: number): EventOf<"cell-moved"> {
  findCell(doc, cellId);
  return { type: "cell-moved", cellId, toIndex: Math.min(toIndex, doc.cells.length - 1) };
}

export function setSource(doc: NotebookDocument, cellId: string, source: string, by: string): EventOf<"cell-source"> {
  findCell(doc, cellId);
  return { type: "cell-source", cellId, source, by };
}

export function setKind(doc: NotebookDocument, cellId: string, kind: CellKind): NotebookEvent[] {
  const cell = findCell(doc, cellId);
  if (cell.runState !== "idle") throw new CommandError("busy", "a queued or running cell cannot change kind");
  const events: NotebookEvent[] = [{ type: "cell-kind", cellId, kind }];
  // A markdown cell has no outputs.
  if (kind === "markdown" && cell.outputs.length > 0) events.push({ type: "cell-outputs-cleared", cellId });
  return events;
}
