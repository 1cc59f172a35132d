"use client";
/**
 * What a cell editor shows until Monaco has loaded: the source in the same
 * font and size, so the page neither jumps nor hides code.
 */
import { createContext, useContext } from "react";

export const EditorSourceContext = createContext<string>("");

interface Props {
  source?: string;
}

export default function EditorFallback({ source }: Props) {
  const fromContext = useContext(EditorSourceContext);
  const text = source ?? fromContext;
  return (
    <pre className="editor-fallback" aria-busy="true">
      {text === "" ? " " : text}
    </pre>
  );
}
