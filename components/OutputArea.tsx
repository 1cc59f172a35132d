"use client";
/** The outputs under a cell, in order. */
import { memo } from "react";
import type { CellOutput } from "../server/protocol/notebook-model";
import OutputItem from "./OutputItem";

interface Props {
  cellId: string;
  outputs: readonly CellOutput[];
}

function OutputArea({ cellId, outputs }: Props) {
  if (outputs.length === 0) return null;
  return (
    <div className="output-area" data-testid="cell-output" data-cell-id={cellId}>
      {outputs.map((output, i) => (
        <OutputItem key={i} output={output} />
      ))}
    </div>
  );
}

export default memo(OutputArea);
