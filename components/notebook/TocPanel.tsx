"use client";
/** The table of contents: the markdown cells' headings; a click shows and selects the heading's cell. */
import { useMemo } from "react";
import { tableOfContents } from "./model/toc";

import "./TocPanel.css";

interface Props {
  cells: ReadonlyArray<{ id: string; kind: string; source: string }>;
  selectedId: string | null;
  onJump(cellId: string): void;
  onClose(): void;
}

export default function TocPanel({ cells, selectedId, onJump, onClose }: Props) {
  const entries = useMemo(() => tableOfContents(cells), [cells]);
  return (
    <nav className="toc-panel" data-testid="toc-panel" aria-label="Table of contents">
      <div className="toc-head">
        <strong>Contents</strong>
        <button type="button" className="button button-ghost button-small" aria-label="Hide the table of contents" data-testid="toc-close" onClick={onClose}>
          ×
        </button>
      </div>
      {entries.length === 0 ? (
        <p className="toc-empty">No headings yet: start a markdown cell with “# ”.</p>
      ) : (
        <ol className="toc-list">
          {entries.map((entry, i) => (
            <li key={`${entry.cellId}-${i}`} className={`toc-level-${entry.level}`}>
              <button
                type="button"
                className={`toc-entry${entry.cellId === selectedId ? " toc-current" : ""}`}
                data-testid="toc-entry"
                data-cell-id={entry.cellId}
                data-level={entry.level}
                onClick={() => onJump(entry.cellId)}
              >
                {entry.text}
              </button>
            </li>
          ))}
        </ol>
      )}
    </nav>
  );
}
