/**
 * Jupyter's command/edit mode keyboard machine, as a pure function of
 * (state, key, context) → (state, actions). The caller performs the actions
 * (send commands, insert cells) and renders from the state (which cell is
 * selected, whether its editor has focus).
 *
 * Which key does what is the table in shortcuts.ts (the help dialog lists
 * it); this file says what each command does. Shift+Enter on the last cell
 * appends a new one; D,D on the only cell leaves a fresh empty one.
 * Edit mode: every key without a shortcut belongs to the editor.
 */
import { assertNever } from "../../../server/core/assert-never";
import type { CellKind } from "../../../server/core/protocol/notebook-model";
import { findShortcut, type ShortcutCommand } from "./shortcuts";

export type Mode = "command" | "edit";

export interface CommandModeState {
  mode: Mode;
  selectedId: string | null;
  /** First key of a two-key chord (D,D · I,I · 0,0) and when it was pressed. */
  chord: { key: ChordKey; at: number } | null;
}

type ChordKey = "d" | "i" | "0";

export interface KeyInput {
  /** `KeyboardEvent.key`: "a", "Enter", "ArrowUp", "Escape", … */
  key: string;
  shift: boolean;
  ctrl: boolean;
  alt: boolean;
  meta: boolean;
  /** Milliseconds (any monotonic clock): used only to expire chords. */
  at: number;
}

export interface KeyContext {
  cells: ReadonlyArray<{ id: string; kind: CellKind }>;
  /** An unused cell id, taken if this key inserts a cell. */
  newCellId: string;
}

export type CommandAction =
  /** Code cells are executed; markdown cells are only rendered (never sent to the kernel). */
  | { type: "run"; cellIds: string[] }
  | { type: "insert-cell"; index: number; cellId: string; kind: CellKind }
  | { type: "delete-cell"; cellId: string }
  | { type: "set-kind"; cellId: string; kind: CellKind }
  | { type: "interrupt" }
  | { type: "restart" }
  /** Put the most recently deleted cell back (the controller keeps the deleted cells). */
  | { type: "undo-delete" }
  /** A panel or dialog of the page: shortcuts help, command palette, find and replace, table of contents. */
  | { type: "open"; panel: PanelCommand };

export type PanelCommand = "help" | "palette" | "find" | "toggle-toc";

export interface KeyResult {
  state: CommandModeState;
  actions: CommandAction[];
  /** True when the key was used: the caller should preventDefault. */
  handled: boolean;
}

export const CHORD_TIMEOUT_MS = 1000;

export const initialCommandModeState: CommandModeState = { mode: "command", selectedId: null, chord: null };

export function handleKey(state: CommandModeState, input: KeyInput, ctx: KeyContext): KeyResult {
  const chord = state.chord !== null && input.at - state.chord.at <= CHORD_TIMEOUT_MS ? state.chord : null;
  const s: CommandModeState = { ...state, chord: null, selectedId: normaliseSelection(state.selectedId, ctx) };
  const found = findShortcut(s.mode, input);
  // In edit mode every key without a shortcut belongs to the editor (and the state, a pending chord included, stays).
  if (found === null) return s.mode === "edit" ? { state, actions: [], handled: false } : unhandled(s);
  const { shortcut, binding } = found;
  if (binding.chord === true && (chord === null || chord.key !== binding.key)) {
    return done({ ...s, chord: { key: binding.key as ChordKey, at: input.at } });
  }
  return commandAction(s, shortcut.command, ctx);
}

/** What a shortcut's command does to the selection and mode, and the actions for the caller (also the palette's way in). */
export function runCommand(state: CommandModeState, command: ShortcutCommand, ctx: KeyContext): KeyResult {
  return commandAction({ ...state, chord: null, selectedId: normaliseSelection(state.selectedId, ctx) }, command, ctx);
}

function commandAction(s: CommandModeState, command: ShortcutCommand, ctx: KeyContext): KeyResult {
  const index = indexOf(s.selectedId, ctx);
  const selected = index === -1 ? undefined : ctx.cells[index];
  switch (command) {
    case "run-advance":
    case "run-in-place":
    case "run-insert":
      return runKey(s, command, ctx);
    case "edit-mode":
      return selected === undefined ? done(s) : done({ ...s, mode: "edit" });
    case "command-mode":
      return done({ ...s, mode: "command" });
    case "select-up":
      return done({ ...s, selectedId: neighbour(ctx, index, -1) });
    case "select-down":
      return done({ ...s, selectedId: neighbour(ctx, index, +1) });
    case "insert-above":
    case "insert-below": {
      const above = command === "insert-above";
      const at = index === -1 ? (above ? 0 : ctx.cells.length) : above ? index : index + 1;
      return done({ ...s, selectedId: ctx.newCellId }, [{ type: "insert-cell", index: at, cellId: ctx.newCellId, kind: "code" }]);
    }
    case "to-markdown":
    case "to-code": {
      const kind: CellKind = command === "to-markdown" ? "markdown" : "code";
      if (selected === undefined || selected.kind === kind) return done(s);
      return done(s, [{ type: "set-kind", cellId: selected.id, kind }]);
    }
    case "delete-cell":
      return deleteSelected(s, index, ctx);
    case "undo-delete":
      return done(s, [{ type: "undo-delete" }]);
    case "interrupt":
      return done(s, [{ type: "interrupt" }]);
    case "restart":
      return done(s, [{ type: "restart" }]);
    case "help":
    case "palette":
    case "find":
    case "toggle-toc":
      return done(s, [{ type: "open", panel: command }]);
    default:
      return assertNever(command, "shortcut command");
  }
}

function runKey(s: CommandModeState, command: "run-advance" | "run-in-place" | "run-insert", ctx: KeyContext): KeyResult {
  const index = indexOf(s.selectedId, ctx);
  if (s.selectedId === null || index === -1) return done(s);
  const run: CommandAction = { type: "run", cellIds: [s.selectedId] };
  if (command === "run-insert") {
    return done({ ...s, mode: "edit", selectedId: ctx.newCellId }, [
      run,
      { type: "insert-cell", index: index + 1, cellId: ctx.newCellId, kind: "code" },
    ]);
  }
  if (command === "run-in-place") return done({ ...s, mode: "command" }, [run]);
  // Shift+Enter: run and advance, appending a fresh cell after the last one.
  const next = ctx.cells[index + 1];
  if (next !== undefined) return done({ ...s, mode: "command", selectedId: next.id }, [run]);
  return done({ ...s, mode: "edit", selectedId: ctx.newCellId }, [
    run,
    { type: "insert-cell", index: index + 1, cellId: ctx.newCellId, kind: "code" },
  ]);
}

function deleteSelected(s: CommandModeState, index: number, ctx: KeyContext): KeyResult {
  const selected = ctx.cells[index];
  if (selected === undefined) return done(s);
  if (ctx.cells.length === 1) {
    // A notebook is never left without a cell (as in JupyterLab).
    return done({ ...s, selectedId: ctx.newCellId }, [
      { type: "delete-cell", cellId: selected.id },
      { type: "insert-cell", index: 0, cellId: ctx.newCellId, kind: "code" },
    ]);
  }
  const after = ctx.cells[index + 1] ?? ctx.cells[index - 1];
  return done({ ...s, selectedId: after?.id ?? null }, [{ type: "delete-cell", cellId: selected.id }]);
}

/** Keep the selection on an existing cell (a remote delete may have removed it). */
function normaliseSelection(selectedId: string | null, ctx: KeyContext): string | null {
  if (selectedId !== null && ctx.cells.some((c) => c.id === selectedId)) return selectedId;
  return ctx.cells[0]?.id ?? null;
}

function neighbour(ctx: KeyContext, index: number, delta: number): string | null {
  if (ctx.cells.length === 0) return null;
  const i = index === -1 ? 0 : Math.min(Math.max(index + delta, 0), ctx.cells.length - 1);
  return ctx.cells[i]?.id ?? null;
}

function indexOf(cellId: string | null, ctx: KeyContext): number {
  return cellId === null ? -1 : ctx.cells.findIndex((c) => c.id === cellId);
}

function done(state: CommandModeState, actions: CommandAction[] = []): KeyResult {
  return { state, actions, handled: true };
}

function unhandled(state: CommandModeState): KeyResult {
  return { state, actions: [], handled: false };
}
