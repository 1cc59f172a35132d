"use client";
/**
 * A cell's source editor. Monaco is loaded on the client only (next/dynamic,
 * ssr: false); until then the source is shown as plain text.
 */
import dynamic from "next/dynamic";
import type { KeyInput } from "./model/command-mode";
import type { KernelAssist } from "./model/kernel-assist";
import EditorFallback, { EditorSourceContext } from "./EditorFallback";

import "./CodeEditor.css";

const MonacoEditor = dynamic(() => import("./MonacoEditor"), {
  ssr: false,
  loading: () => <EditorFallback />,
});

export interface Props {
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

export default function CodeEditor(props: Props) {
  return (
    <div className="code-editor" data-testid="cell-editor" data-cell-id={props.cellId} data-read-only={props.readOnly === true}>
      <EditorSourceContext.Provider value={props.value}>
        <MonacoEditor {...props} />
      </EditorSourceContext.Provider>
    </div>
  );
}
