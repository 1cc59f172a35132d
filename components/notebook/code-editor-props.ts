/**
 * What a cell's editor is given: the same for the Monaco editor and the plain
 * fallback shown while Monaco loads (CodeEditor.tsx), so it lives apart from
 * both and neither imports the other for it.
 */
import type { KeyInput } from "./model/command-mode";
import type { KernelAssist } from "./model/kernel-assist";

export interface CodeEditorProps {
  cellId: string;
  value: string;
  language: "python" | "markdown";
  /** The notebook is in edit mode on this cell: the editor takes keyboard focus. */
  focused: boolean;
  ariaLabel: string;
  /** Rendered from a template: shown and selectable, changed only through the form. */
  readOnly?: boolean;
  onChange(value: string): void;
  onFocus(): void;
  onBlur(): void;
  /** Run keys and Escape, handed to the command-mode machine. */
  onKey(input: KeyInput): void;
  /** Tab completion and Shift+Tab help from the kernel; null or absent: words of the cell only. */
  assist?: KernelAssist | null;
}
