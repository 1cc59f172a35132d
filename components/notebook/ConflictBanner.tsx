"use client";
/** Shown on a cell whose edit the server refused because another tab changed the cell first. */
import type { CellConflict, ConflictChoice } from "./model/connection";

import "./ConflictBanner.css";

interface Props {
  conflict: CellConflict;
  onResolve(choice: ConflictChoice): void;
}

export default function ConflictBanner({ conflict, onResolve }: Props) {
  return (
    <div className="cell-conflict" data-testid="cell-conflict" role="alert">
      <div className="cell-conflict-row">
        <span className="cell-conflict-text">This cell was changed in another tab.</span>
        <button type="button" className="button" data-testid="conflict-use-theirs" onClick={() => onResolve("use-theirs")}>
          Use theirs
        </button>
        <button type="button" className="button button-primary" data-testid="conflict-keep-mine" onClick={() => onResolve("keep-mine")}>
          Keep mine
        </button>
      </div>
      <details className="cell-conflict-theirs">
        <summary>Their version</summary>
        <pre>{conflict.theirSource === "" ? "(empty)" : conflict.theirSource}</pre>
      </details>
    </div>
  );
}
