"use client";
/** The outputs under a cell, in order. */
import { memo } from "react";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import OutputItem from "./OutputItem";
import type { RunActions } from "./run-actions";

import "./OutputArea.css";


interface Props {
  cellId: string;
  outputs: readonly CellOutput[];
  actions?: RunActions | null;
  /** The cell is queued or running. */
  running?: boolean;
}

function OutputArea({ cellId, outputs, actions = null, running = false }: Props) {
  if (outputs.length === 0) return null;
  return (
    <div className="output-area" data-testid="cell-output" data-cell-id={cellId}>
      {outputs.map((output, i) => (
        <OutputItem key={i} output={output} actions={actions} running={running} />
      ))}
    </div>
  );
}

export default memo(OutputArea);
