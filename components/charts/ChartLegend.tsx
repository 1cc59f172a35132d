"use client";
/** A chart's legend as HTML: one entry per line, bar series or phase; an entry's text is exactly its label. */
import { memo } from "react";

export interface LegendEntry {
  key: string;
  label: string;
  color: string;
  dashed?: boolean;
  faded?: boolean;
}

interface Props {
  entries: readonly LegendEntry[];
}

function ChartLegend({ entries }: Props) {
  if (entries.length === 0) return null;
  return (
    <ul className="chart-legend">
      {entries.map((entry) => (
        <li key={entry.key} className="chart-legend-item" data-testid="chart-legend-item">
          <span
            className={entry.dashed ? "chart-swatch chart-swatch-dashed" : "chart-swatch"}
            style={{ borderColor: entry.color, backgroundColor: entry.dashed ? "transparent" : entry.color, opacity: entry.faded ? 0.55 : 1 }}
            aria-hidden="true"
          />
          {entry.label}
        </li>
      ))}
    </ul>
  );
}

export default memo(ChartLegend);
