/**
 * Jupyter's command/edit mode keyboard machine, as a pure function of
 * (state, key, context) → (state, actions). The caller performs the actions
 * (send commands, insert cells) and renders from the state (which cell is
 * selected, whether its editor has focus).
 *
 * Command mode: Enter edit · A/B insert above/below · D,D delete · I,I
 * interrupt · 0,0 restart · M/Y markdown/code · ↑/K ↓/J select.
 * Both modes: Shift+Enter run and select next (a new cell at the end if it
 * was the last) · Ctrl/Cmd+Enter run in place · Alt+Enter run and insert below.
 * Edit mode: Esc → command mode; every other key belongs to the editor.
 */
import { assertNever } from "../../server/core/assert-never";
import type { CellKind } from "../../server/core/protocol/notebook-model";

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
  | { type: "restart" };

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

  if (input.key === "Enter" && (input.shift || input.ctrl || input.meta || input.alt)) {
    return runKey(s, input, ctx);
  }
  if (s.mode === "edit") {
    if (input.key === "Escape" && !input.shift && !input.ctrl && !input.alt && !input.meta) {
      return done({ ...s, mode: "command" });
    }
    return { state: state, actions: [], handled: false };
  }
  if (input.ctrl || input.alt || input.meta) return unhandled(s);
  return commandKey(s, chord, input, ctx);
}

function runKey(s: CommandModeState, input: KeyInput, ctx: KeyContext): KeyResult {
  const index = indexOf(s.selectedId, ctx);
  if (s.selectedId === null || index === -1) return done(s);
  const run: CommandAction = { type: "run", cellIds: [s.selectedId] };
  if (input.alt) {
    return done({ ...s, mode: "edit", selectedId: ctx.newCellId }, [
      run,
      { type: "insert-cell", index: index + 1, cellId: ctx.newCellId, kind: "code" },
    ]);
  }
  if (input.ctrl || input.meta) return done({ ...s, mode: "command" }, [run]);
  // Shift+Enter: run and advance, appending a fresh cell after the last one.
  const next = ctx.cells[index + 1];
  if (next !== undefined) return done({ ...s, mode: "command", selectedId: next.id }, [run]);
  return done({ ...s, mode: "edit", selectedId: ctx.newCellId }, [
    run,
    { type: "insert-cell", index: index + 1, cellId: ctx.newCellId, kind: "code" },
  ]);
}

function commandKey(
  s: CommandModeState,
  chord: CommandModeState["chord"],
  input: KeyInput,
  ctx: KeyContext,
): KeyResult {
  const index = indexOf(s.selectedId, ctx);
  const selected = index === -1 ? undefined : ctx.cells[index];
  const key = input.key.length === 1 ? input.key.toLowerCase() : input.key;
  if (input.shift && key.length === 1) return unhandled(s);

  switch (key) {
    case "Enter":
      return selected === undefined ? done(s) : done({ ...s, mode: "edit" });
    case "Escape":
      return done(s);
    case "ArrowUp":
    case "k":
      return done({ ...s, selectedId: neighbour(ctx, index, -1) });
    case "ArrowDown":
    case "j":
      return done({ ...s, selectedId: neighbour(ctx, index, +1) });
    case "a":
    case "b": {
      const at = index === -1 ? (key === "a" ? 0 : ctx.cells.length) : key === "a" ? index : index + 1;
      return done({ ...s, selectedId: ctx.newCellId }, [
        { type: "insert-cell", index: at, cellId: ctx.newCellId, kind: "code" },
      ]);
    }
    case "m":
    case "y": {
      const kind: CellKind = key === "m" ? "markdown" : "code";
      if (selected === undefined || selected.kind === kind) return done(s);
      return done(s, [{ type: "set-kind", cellId: selected.id, kind }]);
    }
    case "d":
    case "i":
    case "0":
      if (chord === null || chord.key !== key) return done({ ...s, chord: { key, at: input.at } });
      return chordAction(s, key, index, ctx);
    default:
      return unhandled(s);
  }
}

function chordAction(s: CommandModeState, key: ChordKey, index: number, ctx: KeyContext): KeyResult {
  switch (key) {
    case "i":
      return done(s, [{ type: "interrupt" }]);
    case "0":
      return done(s, [{ type: "restart" }]);
    case "d": {
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
    default:
      return assertNever(key, "chord");
  }
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
