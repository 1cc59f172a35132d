/**
 * Every keyboard shortcut of the notebook, in one table. The key machine
 * (command-mode.ts) looks keys up here, the help dialog (H) lists this table
 * and the command palette shows each command's keys from it: adding a
 * shortcut here is the only way to add one, so the help can never go stale.
 */

/** What a shortcut does; the palette's commands use the same names. */
export type ShortcutCommand =
  | "run-advance"
  | "run-in-place"
  | "run-insert"
  | "edit-mode"
  | "command-mode"
  | "select-up"
  | "select-down"
  | "insert-above"
  | "insert-below"
  | "to-markdown"
  | "to-code"
  | "delete-cell"
  | "undo-delete"
  | "interrupt"
  | "restart"
  | "help"
  | "palette"
  | "find"
  | "toggle-toc";

/** One key press: `key` is `KeyboardEvent.key`, a letter in lower case. Ctrl also means Cmd. */
export interface KeyBinding {
  key: string;
  shift?: boolean;
  ctrl?: boolean;
  alt?: boolean;
  /** Pressed twice within the chord timeout (D,D · I,I · 0,0). */
  chord?: boolean;
}

/** Where a shortcut works: command mode only, edit mode only, or both (the editor's keys reach the table through Notebook.tsx). */
export type ShortcutMode = "command" | "both" | "edit";

export interface Shortcut {
  command: ShortcutCommand;
  mode: ShortcutMode;
  bindings: readonly KeyBinding[];
  description: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { command: "run-advance", mode: "both", bindings: [{ key: "Enter", shift: true }], description: "Run the cell and select the one below" },
  { command: "run-in-place", mode: "both", bindings: [{ key: "Enter", ctrl: true }], description: "Run the cell" },
  { command: "run-insert", mode: "both", bindings: [{ key: "Enter", alt: true }], description: "Run the cell and insert one below" },
  { command: "edit-mode", mode: "command", bindings: [{ key: "Enter" }], description: "Edit the selected cell" },
  { command: "command-mode", mode: "edit", bindings: [{ key: "Escape" }], description: "Leave the editor (command mode)" },
  { command: "select-up", mode: "command", bindings: [{ key: "ArrowUp" }, { key: "k" }], description: "Select the cell above" },
  { command: "select-down", mode: "command", bindings: [{ key: "ArrowDown" }, { key: "j" }], description: "Select the cell below" },
  { command: "insert-above", mode: "command", bindings: [{ key: "a" }], description: "Insert a cell above" },
  { command: "insert-below", mode: "command", bindings: [{ key: "b" }], description: "Insert a cell below" },
  { command: "to-markdown", mode: "command", bindings: [{ key: "m" }], description: "Make the cell markdown" },
  { command: "to-code", mode: "command", bindings: [{ key: "y" }], description: "Make the cell code" },
  { command: "delete-cell", mode: "command", bindings: [{ key: "d", chord: true }], description: "Delete the cell" },
  { command: "undo-delete", mode: "command", bindings: [{ key: "z" }], description: "Undo the last cell deletion" },
  { command: "interrupt", mode: "command", bindings: [{ key: "i", chord: true }], description: "Interrupt the kernel" },
  { command: "restart", mode: "command", bindings: [{ key: "0", chord: true }], description: "Restart the kernel" },
  { command: "find", mode: "command", bindings: [{ key: "f", ctrl: true }], description: "Find and replace in all cells" },
  { command: "toggle-toc", mode: "command", bindings: [{ key: "t" }], description: "Show or hide the table of contents" },
  { command: "palette", mode: "both", bindings: [{ key: "p", ctrl: true, shift: true }], description: "Open the command palette" },
  { command: "help", mode: "command", bindings: [{ key: "h" }], description: "Show the keyboard shortcuts" },
];

export interface PressedKey {
  key: string;
  shift: boolean;
  ctrl: boolean;
  alt: boolean;
  meta: boolean;
}

/** Whether `input` is `binding` (Ctrl and Cmd count as one; extra modifiers make it another key). */
export function matches(binding: KeyBinding, input: PressedKey): boolean {
  const key = input.key.length === 1 ? input.key.toLowerCase() : input.key;
  return (
    key === binding.key &&
    input.shift === (binding.shift ?? false) &&
    (input.ctrl || input.meta) === (binding.ctrl ?? false) &&
    input.alt === (binding.alt ?? false)
  );
}

/** The shortcut `input` presses in `mode`, if any. */
export function findShortcut(mode: "command" | "edit", input: PressedKey): { shortcut: Shortcut; binding: KeyBinding } | null {
  for (const shortcut of SHORTCUTS) {
    if (shortcut.mode !== "both" && shortcut.mode !== mode) continue;
    const binding = shortcut.bindings.find((b) => matches(b, input));
    if (binding !== undefined) return { shortcut, binding };
  }
  return null;
}

const KEY_NAMES: Record<string, string> = { ArrowUp: "↑", ArrowDown: "↓", Escape: "Esc" };

/** "Shift+Enter", "D, D", "Ctrl+Shift+P": how the help and the palette write a binding. */
export function bindingLabel(binding: KeyBinding): string {
  const name = KEY_NAMES[binding.key] ?? (binding.key.length === 1 ? binding.key.toUpperCase() : binding.key);
  const parts = [binding.ctrl ? "Ctrl" : null, binding.alt ? "Alt" : null, binding.shift ? "Shift" : null, name].filter((p) => p !== null);
  const one = parts.join("+");
  return binding.chord ? `${one}, ${one}` : one;
}

/** Every binding of a command, written out ("↑ / K"); "" for a command without a shortcut. */
export function shortcutLabel(command: ShortcutCommand | string): string {
  const shortcut = SHORTCUTS.find((s) => s.command === command);
  return shortcut === undefined ? "" : shortcut.bindings.map(bindingLabel).join(" / ");
}

/** The help dialog's sections. */
export function shortcutSections(): Array<{ title: string; shortcuts: Shortcut[] }> {
  return [
    { title: "Command mode", shortcuts: SHORTCUTS.filter((s) => s.mode === "command") },
    { title: "Both modes", shortcuts: SHORTCUTS.filter((s) => s.mode === "both") },
    { title: "Edit mode", shortcuts: SHORTCUTS.filter((s) => s.mode === "edit") },
  ];
}
