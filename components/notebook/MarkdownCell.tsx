"use client";
/**
 * A markdown cell when it is not being edited: rendered with marked (TeX
 * math by KaTeX, see model/markdown-math.ts), then sanitised with DOMPurify. Double-click edits it (as in Jupyter).
 */
import { useMemo } from "react";
import { markdownToSafeHtml } from "../shell/sanitize-html";

// KaTeX's stylesheet: Next bundles it and its fonts (served from this origin: no CDN is reachable).
import "katex/dist/katex.min.css";
import "./MarkdownCell.css";

interface Props {
  cellId: string;
  source: string;
  onEdit(): void;
}

export default function MarkdownCell({ cellId, source, onEdit }: Props) {
  const html = useMemo(() => (source.trim() === "" ? "" : markdownToSafeHtml(source)), [source]);
  if (html === "") {
    return (
      <div className="markdown-empty" data-testid="markdown-rendered" data-cell-id={cellId} onDoubleClick={onEdit}>
        Empty markdown cell — double-click or press Enter to edit
      </div>
    );
  }
  if (html === null) {
    return (
      <pre className="markdown-source" data-testid="markdown-rendered" data-cell-id={cellId} onDoubleClick={onEdit}>
        {source}
      </pre>
    );
  }
  return (
    <div
      className="markdown-rendered"
      data-testid="markdown-rendered"
      data-cell-id={cellId}
      onDoubleClick={onEdit}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
