"use client";
/**
 * A cell's source editor. Monaco is loaded on the client only (next/dynamic,
 * ssr: false); until then the source is shown as plain text.
 */
import dynamic from "next/dynamic";
import type { CodeEditorProps } from "./code-editor-props";
import EditorFallback, { EditorSourceContext } from "./EditorFallback";

import "./CodeEditor.css";

const MonacoEditor = dynamic(() => import("./MonacoEditor"), {
  ssr: false,
  loading: () => <EditorFallback />,
});

export default function CodeEditor(props: CodeEditorProps) {
  return (
    <div className="code-editor" data-testid="cell-editor" data-cell-id={props.cellId} data-read-only={props.readOnly === true}>
      <EditorSourceContext.Provider value={props.value}>
        <MonacoEditor {...props} />
      </EditorSourceContext.Provider>
    </div>
  );
}
