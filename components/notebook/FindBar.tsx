"use client";
/**
 * Ctrl+F in command mode: find (and replace) across every cell. Enter goes
 * to the next match, Shift+Enter the previous; the match's cell is selected
 * and scrolled to. Cells rendered from a scenario form are counted but not
 * replaced (model/find-replace.ts). Inside an editor, Ctrl+F is Monaco's own
 * find in that cell.
 */
import { useMemo, useState } from "react";
import type { Cell } from "../../server/core/protocol/notebook-model";
import { findMatches, replaceAll, replaceOne, stepMatch, type FindCell } from "./model/find-replace";

import "./FindBar.css";

interface Props {
  cells: readonly Cell[];
  canEdit: boolean;
  onShow(cellId: string): void;
  onReplace(sources: Record<string, string>, message: string): void;
  onClose(): void;
}

export default function FindBar({ cells, canEdit, onShow, onReplace, onClose }: Props) {
  const [query, setQuery] = useState("");
  const [replacement, setReplacement] = useState("");
  const [caseSensitive, setCaseSensitive] = useState(false);
  const [current, setCurrent] = useState(-1);
  const findCells = useMemo<FindCell[]>(() => cells.map((c) => ({ id: c.id, source: c.source, locked: c.template !== null && !c.template.detached })), [cells]);
  const matches = useMemo(() => findMatches(findCells, query, { caseSensitive }), [findCells, query, caseSensitive]);
  const at = current < matches.length ? current : -1;
  const lockedCount = matches.filter((m) => m.locked).length;

  const go = (delta: 1 | -1): void => {
    const next = stepMatch(at, delta, matches.length);
    setCurrent(next);
    const match = matches[next];
    if (match !== undefined) onShow(match.cellId);
  };

  const replaceCurrent = (): void => {
    const match = matches[at] ?? matches.find((m) => !m.locked);
    if (match === undefined) return;
    const changed = replaceOne(findCells, match, replacement);
    if (changed !== null) onReplace({ [changed.cellId]: changed.source }, "Replaced 1 match");
  };

  const replaceEverywhere = (): void => {
    const result = replaceAll(findCells, query, replacement, { caseSensitive });
    const cellCount = Object.keys(result.sources).length;
    if (cellCount === 0) return;
    onReplace(result.sources, `Replaced ${result.replaced} ${result.replaced === 1 ? "match" : "matches"} in ${cellCount} ${cellCount === 1 ? "cell" : "cells"}`);
    setCurrent(-1);
  };

  const count = query === "" ? "" : matches.length === 0 ? "No matches" : `${at === -1 ? "–" : at + 1} of ${matches.length}`;

  return (
    <div
      className="find-bar"
      data-testid="find-bar"
      role="search"
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <input
        className="find-input"
        data-testid="find-input"
        aria-label="Find in all cells"
        placeholder="Find in all cells"
        autoFocus
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setCurrent(-1);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            go(e.shiftKey ? -1 : 1);
          }
        }}
      />
      <label className="find-case" title="Match case">
        <input type="checkbox" data-testid="find-case" checked={caseSensitive} onChange={(e) => setCaseSensitive(e.target.checked)} /> Aa
      </label>
      <span className="find-count" data-testid="find-count" data-count={matches.length} aria-live="polite">
        {count}
        {lockedCount > 0 && ` (${lockedCount} in form cells, not replaced)`}
      </span>
      <button type="button" className="button button-small" data-testid="find-prev" title="Previous match (Shift+Enter)" disabled={matches.length === 0} onClick={() => go(-1)}>
        ↑
      </button>
      <button type="button" className="button button-small" data-testid="find-next" title="Next match (Enter)" disabled={matches.length === 0} onClick={() => go(1)}>
        ↓
      </button>
      {canEdit && (
        <>
          <input
            className="find-input"
            data-testid="replace-input"
            aria-label="Replace with"
            placeholder="Replace with"
            value={replacement}
            onChange={(e) => setReplacement(e.target.value)}
          />
          <button type="button" className="button button-small" data-testid="replace-one" disabled={matches.length === lockedCount} onClick={replaceCurrent}>
            Replace
          </button>
          <button type="button" className="button button-small" data-testid="replace-all" disabled={matches.length === lockedCount} onClick={replaceEverywhere}>
            Replace all
          </button>
        </>
      )}
      <button type="button" className="button button-ghost button-small" data-testid="find-close" aria-label="Close find" onClick={onClose}>
        ×
      </button>
    </div>
  );
}
