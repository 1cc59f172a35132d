/**
 * Pure edits of a notebook document: each returns the event that tells the
 * viewers, or throws a CommandError with a message for the user.
 */
import type { Cell, CellKind, NotebookDocument } from "../core/protocol/notebook-model";
import type { NotebookEvent } from "../core/protocol/socket-api";
import { MAX_CELLS } from "../core/limits";

export class CommandError extends Error {}

export function newCell(id: string, kind: CellKind = "code", source = ""): Cell {
  return { id, kind, source, outputs: [], executionCount: null, runState: "idle", liveMetrics: null, lastRun: null, executionId: null, template: null };
}

export function findCell(doc: NotebookDocument, cellId: string): Cell {
  const cell = doc.cells.find((candidate) => candidate.id === cellId);
  if (!cell) throw new CommandError(`no cell ${cellId} in notebook ${doc.id}`);
  return cell;
}

export function insertCell(doc: NotebookDocument, index: number, cell: Cell): NotebookEvent {
  if (doc.cells.length >= MAX_CELLS) throw new CommandError(`a notebook holds at most ${MAX_CELLS} cells`);
  if (doc.cells.some((existing) => existing.id === cell.id)) throw new CommandError(`cell ${cell.id} already exists`);
  const at = Math.min(index, doc.cells.length);
  doc.cells.splice(at, 0, cell);
  return { type: "cell-inserted", index: at, cell };
}

export function deleteCell(doc: NotebookDocument, cellId: string): NotebookEvent {
  const cell = findCell(doc, cellId);
  if (cell.runState !== "idle") throw new CommandError("a queued or running cell cannot be deleted; interrupt it first");
  doc.cells.splice(doc.cells.indexOf(cell), 1);
  return { type: "cell-deleted", cellId };
}

export function moveCell(doc: NotebookDocument, cellId: string, toIndex: number): NotebookEvent {
  const cell = findCell(doc, cellId);
  doc.cells.splice(doc.cells.indexOf(cell), 1);
  const at = Math.min(toIndex, doc.cells.length);
  doc.cells.splice(at, 0, cell);
  return { type: "cell-moved", cellId, toIndex: at };
}

export function setSource(doc: NotebookDocument, cellId: string, source: string, by: string): NotebookEvent {
  findCell(doc, cellId).source = source;
  return { type: "cell-source", cellId, source, by };
}

export function setKind(doc: NotebookDocument, cellId: string, kind: CellKind): NotebookEvent[] {
  const cell = findCell(doc, cellId);
  if (cell.runState !== "idle") throw new CommandError("a queued or running cell cannot change kind");
  cell.kind = kind;
  const events: NotebookEvent[] = [{ type: "cell-kind", cellId, kind }];
  if (kind === "markdown" && cell.outputs.length > 0) {
    cell.outputs = [];
    events.push({ type: "cell-outputs-cleared", cellId });
  }
  return events;
}
