/**
 * The one document reducer: every copy of a notebook document, the server's
 * and each browser's, changes only through it.
 *
 * Two kinds of input arrive here:
 * - server events (`NotebookEvent`): the server validates a command, builds
 *   its events and applies them to its own document with `applyServerEvent`
 *   before sending them; every viewer applies the same events in the same
 *   order, so a viewer's copy (our own echoes included) is the server's
 *   document, and a joining viewer's snapshot is what the live ones show;
 * - local actions: the user's unacknowledged changes, replayed on top of that
 *   copy to give what the page shows (see `rebase` in pending-edits.ts).
 *   Replaying an action the server has already applied changes nothing:
 *   inserting a cell that exists, deleting a missing cell, moving a cell to
 *   where it is, are all no-ops.
 *
 * The reducer keeps object identity of every cell it does not change, so
 * memoised cell components re-render only when their own cell changed.
 */
import type { Cell, CellKind, CellOutput, NotebookDocument } from "../protocol/notebook-model";
import type { NotebookEvent } from "../protocol/socket-api";
import { assertNever } from "../assert-never";
import { appendCollapsed, collapseOverwrites } from "./stream-overwrites";

export type LocalAction =
  | { type: "insert-cell"; index: number; cell: Cell }
  | { type: "delete-cell"; cellId: string }
  | { type: "move-cell"; cellId: string; toIndex: number }
  | { type: "set-source"; cellId: string; source: string }
  | { type: "set-kind"; cellId: string; kind: CellKind }
  | { type: "clear-outputs"; cellIds: readonly string[] };

export function newCell(id: string, kind: CellKind = "code", source = ""): Cell {
  return { id, kind, source, outputs: [], executionCount: null, runState: "idle", liveMetrics: null, lastRun: null, executionId: null, template: null };
}

export function applyLocalAction(doc: NotebookDocument, action: LocalAction): NotebookDocument {
  switch (action.type) {
    case "insert-cell":
      return insertCell(doc, action.index, action.cell);
    case "delete-cell":
      return deleteCell(doc, action.cellId);
    case "move-cell":
      return moveCell(doc, action.cellId, action.toIndex);
    case "set-source":
      return updateCell(doc, action.cellId, (c) => (c.source === action.source ? c : { ...c, source: action.source }));
    case "set-kind":
      return updateCell(doc, action.cellId, (c) => (c.kind === action.kind ? c : { ...c, kind: action.kind }));
    case "clear-outputs": {
      const ids = new Set(action.cellIds);
      return mapCells(doc, (c) => (ids.has(c.id) && c.outputs.length > 0 ? { ...c, outputs: [] } : c));
    }
    default:
      return assertNever(action);
  }
}

export function applyServerEvent(doc: NotebookDocument, event: NotebookEvent): NotebookDocument {
  switch (event.type) {
    case "cell-inserted":
      return insertCell(doc, event.index, event.cell);
    case "cell-deleted":
      return deleteCell(doc, event.cellId);
    case "cell-moved":
      return moveCell(doc, event.cellId, event.toIndex);
    case "cell-source":
      return applyLocalAction(doc, { type: "set-source", cellId: event.cellId, source: event.source });
    case "cell-kind":
      return applyLocalAction(doc, { type: "set-kind", cellId: event.cellId, kind: event.kind });
    case "cell-run-state":
      return updateCell(doc, event.cellId, (c) => {
        // A run that starts has no metrics yet: the previous run's table goes (as its outputs do).
        const liveMetrics = event.runState === "running" && c.runState !== "running" ? null : c.liveMetrics;
        const unchanged =
          c.runState === event.runState && c.executionCount === event.executionCount && c.liveMetrics === liveMetrics && c.executionId === event.executionId;
        return unchanged ? c : { ...c, runState: event.runState, executionCount: event.executionCount, liveMetrics, executionId: event.executionId };
      });
    case "cell-template":
      return updateCell(doc, event.cellId, (c) => ({ ...c, template: event.template, source: event.source }));
    case "prediction-committed":
      return { ...doc, predictions: { ...doc.predictions, [event.prediction.questionId]: event.prediction } };
    case "cell-metric-points":
    case "cell-device-plan":
      // Chart data lives outside the document (a metric store fed by the controller): the cells need not re-render.
      return doc;
    case "cell-outputs-cleared":
      return applyLocalAction(doc, { type: "clear-outputs", cellIds: [event.cellId] });
    case "cell-output":
      return updateCell(doc, event.cellId, (c) => ({ ...c, outputs: [...c.outputs, event.output] }));
    case "cell-stream":
      return updateCell(doc, event.cellId, (c) => ({ ...c, outputs: appendStream(c.outputs, event.name, event.text) }));
    case "cell-stream-tail":
      return updateCell(doc, event.cellId, (c) => ({ ...c, outputs: replaceTail(c.outputs, event.elidedBytes, event.tail, event.headOutputs) }));
    case "cell-finished":
      return updateCell(doc, event.cellId, (c) => ({ ...c, lastRun: { status: event.status, durationMs: event.durationMs } }));
    case "cell-metrics":
      return updateCell(doc, event.cellId, (c) => ({ ...c, liveMetrics: event.liveMetrics }));
    case "kernel-status":
      return { ...doc, kernel: event.status, ...(doc.kernelIdleShutdownAt ? { kernelIdleShutdownAt: null } : {}) };
    case "kernel-idle-warning":
      return { ...doc, kernelIdleShutdownAt: event.shutdownAt };
    case "kernel-spec-changed":
      return doc.kernelSpec.hostId === event.spec.hostId && doc.kernelSpec.gpus === event.spec.gpus ? doc : { ...doc, kernelSpec: event.spec };
    case "notebook-renamed":
      return doc.title === event.title ? doc : { ...doc, title: event.title };
    case "notebook-deleted":
      return doc.deleted ? doc : { ...doc, deleted: true };
    case "notebook-restored":
      return doc.deleted ? { ...doc, deleted: false } : doc;
    default:
      return assertNever(event);
  }
}

/** Append to the last output if it is the same stream, otherwise start a new stream output; `\r` overwrites collapse (stream-overwrites.ts). */
export function appendStream(outputs: readonly CellOutput[], name: "stdout" | "stderr", text: string): CellOutput[] {
  if (text === "") return [...outputs];
  const last = outputs[outputs.length - 1];
  if (last !== undefined && last.kind === "stream" && last.name === name) {
    return [...outputs.slice(0, -1), { kind: "stream", name, text: appendCollapsed(last.text, text) }];
  }
  return [...outputs, { kind: "stream", name, text: collapseOverwrites(text) }];
}

/**
 * Output went past the server's head budget: the first `headOutputs` outputs
 * (the head, and any tail that a rich output since fixed in place before it)
 * stay; everything after them becomes the elided marker, when something was
 * elided, and the new tail. This is exactly what the server's OutputRecorder
 * holds, so a viewer that watched the run and one that joined later agree.
 */
export function replaceTail(
  outputs: readonly CellOutput[],
  elidedBytes: number,
  tail: ReadonlyArray<{ name: "stdout" | "stderr"; text: string }>,
  headOutputs: number,
): CellOutput[] {
  const result: CellOutput[] = outputs.slice(0, headOutputs);
  if (elidedBytes > 0) result.push({ kind: "elided", elidedBytes });
  // The tail's streams merge with each other, never with the head's last stream.
  const tailStart = result.length;
  for (const segment of tail) {
    const last = result[result.length - 1];
    if (result.length > tailStart && last !== undefined && last.kind === "stream" && last.name === segment.name) {
      result[result.length - 1] = { kind: "stream", name: segment.name, text: last.text + segment.text };
    } else {
      result.push({ kind: "stream", name: segment.name, text: segment.text });
    }
  }
  return result;
}

function insertCell(doc: NotebookDocument, index: number, cell: Cell): NotebookDocument {
  if (doc.cells.some((c) => c.id === cell.id)) return doc;
  const at = clamp(index, 0, doc.cells.length);
  return { ...doc, cells: [...doc.cells.slice(0, at), cell, ...doc.cells.slice(at)] };
}

function deleteCell(doc: NotebookDocument, cellId: string): NotebookDocument {
  if (!doc.cells.some((c) => c.id === cellId)) return doc;
  return { ...doc, cells: doc.cells.filter((c) => c.id !== cellId) };
}

function moveCell(doc: NotebookDocument, cellId: string, toIndex: number): NotebookDocument {
  const from = doc.cells.findIndex((c) => c.id === cellId);
  if (from === -1) return doc;
  const to = clamp(toIndex, 0, doc.cells.length - 1);
  if (from === to) return doc;
  const cells = [...doc.cells];
  const [cell] = cells.splice(from, 1);
  if (cell === undefined) return doc;
  cells.splice(to, 0, cell);
  return { ...doc, cells };
}

/** One lookup and one array copy: the server applies every event of a 10,000-cell notebook through here. */
function updateCell(doc: NotebookDocument, cellId: string, update: (cell: Cell) => Cell): NotebookDocument {
  const at = indexOfCell(doc.cells, cellId);
  const cell = doc.cells[at];
  if (cell === undefined) return doc;
  const next = update(cell);
  if (next === cell) return doc;
  const cells = doc.cells.slice();
  cells[at] = next;
  return { ...doc, cells };
}

/**
 * Where the cell updated last was: events come in runs for one cell (a cell
 * streaming output), and an update keeps every cell in its place, so the
 * next lookup usually costs one comparison instead of a scan. Only a hint:
 * always checked against the array it is used on.
 */
let lastIndex = -1;

function indexOfCell(cells: readonly Cell[], cellId: string): number {
  if (cells[lastIndex]?.id !== cellId) lastIndex = cells.findIndex((c) => c.id === cellId);
  return lastIndex;
}

function mapCells(doc: NotebookDocument, update: (cell: Cell) => Cell): NotebookDocument {
  let changed = false;
  const cells = doc.cells.map((c) => {
    const next = update(c);
    if (next !== c) changed = true;
    return next;
  });
  return changed ? { ...doc, cells } : doc;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(n, lo), hi);
}

/**
 * `next` with every cell that equals its counterpart in `previous` (field by
 * field, by identity) replaced by that counterpart, and the cells array kept
 * when nothing differs. Re-applying unsaved text on every server event makes
 * fresh but equal cell objects; reusing the old ones keeps memoised cells and
 * their editors from re-rendering.
 */
export function reuseUnchangedCells(previous: NotebookDocument | null, next: NotebookDocument): NotebookDocument {
  if (previous === null || previous === next) return next;
  const before = new Map(previous.cells.map((cell) => [cell.id, cell]));
  let changed = next.cells.length !== previous.cells.length;
  const cells = next.cells.map((cell, index) => {
    const old = before.get(cell.id);
    const kept = old !== undefined && old !== cell && sameFields(old, cell) ? old : cell;
    if (kept !== previous.cells[index]) changed = true;
    return kept;
  });
  if (!changed) return sameFields(previous, { ...next, cells: previous.cells }) ? previous : { ...next, cells: previous.cells };
  return { ...next, cells };
}

function sameFields<T extends object>(a: T, b: T): boolean {
  const keys = Object.keys(a) as Array<keyof T>;
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
