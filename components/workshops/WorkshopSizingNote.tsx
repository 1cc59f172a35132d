"use client";
/**
 * Whether the lab can hold a workshop's plan (kernel cap, memory, CPU, GPUs),
 * said to its facilitator on the workshops page and the console before the
 * class arrives, with what to change. Quiet (folded) when it fits.
 */
import type { WorkshopSizing } from "../../server/core/protocol/workshop-model";

import "./WorkshopSizingNote.css";

interface Props {
  sizing: WorkshopSizing;
}

export default function WorkshopSizingNote({ sizing }: Props) {
  return (
    <details className={`workshop-sizing workshop-sizing-${sizing.verdict}`} data-testid="workshop-sizing" data-verdict={sizing.verdict} open={sizing.verdict !== "fits"}>
      <summary>{sizing.summary}</summary>
      <ul className="workshop-sizing-details">
        {sizing.details.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      {sizing.advice.length > 0 && (
        <ul className="workshop-sizing-advice" data-testid="workshop-sizing-advice">
          {sizing.advice.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </details>
  );
}
