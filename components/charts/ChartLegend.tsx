"use client";
/**
 * A chart's legend as HTML: one entry per line, bar series or phase; an
 * entry's text is exactly its label. A line's swatch is a small SVG drawn
 * with the line's own dash pattern and marker, so two lines that differ only
 * by them can be told apart here too. Entries wrap, with room between them,
 * and a label longer than the row wraps inside its entry (charts.css): no
 * two entries ever overlap.
 */
import { memo } from "react";
import { markerPath, type MarkerShape } from "../../server/core/charts/chart-line-style";

export interface LegendEntry {
  key: string;
  label: string;
  color: string;
  dashed?: boolean;
  faded?: boolean;
  /** A line's dash pattern and marker: drawn as a line swatch. */
  dash?: string | null;
  marker?: MarkerShape;
  /** A min–max whisker. */
  whisker?: boolean;
}

interface Props {
  entries: readonly LegendEntry[];
}

function Swatch({ entry }: { entry: LegendEntry }) {
  if (entry.marker !== undefined || entry.whisker) {
    return (
      <svg className="chart-swatch-line" width="26" height="12" viewBox="0 0 26 12" aria-hidden="true">
        {entry.whisker ? (
          <path d="M13,1L13,11M9,1L17,1M9,11L17,11M7,6L19,6" stroke={entry.color} strokeWidth={1.5} fill="none" />
        ) : (
          <>
            <path
              d="M1,6L25,6"
              stroke={entry.color}
              strokeWidth={entry.faded ? 1 : 1.5}
              strokeOpacity={entry.faded ? 0.55 : 1}
              strokeDasharray={entry.dash ?? undefined}
              fill="none"
            />
            <path d={markerPath(entry.marker!, 13, 6, 3)} stroke={entry.color} strokeWidth={1.2} fill="var(--bg)" />
          </>
        )}
      </svg>
    );
  }
  return (
    <span
      className={entry.dashed ? "chart-swatch chart-swatch-dashed" : "chart-swatch"}
      style={{ borderColor: entry.color, backgroundColor: entry.dashed ? "transparent" : entry.color, opacity: entry.faded ? 0.55 : 1 }}
      aria-hidden="true"
    />
  );
}

function ChartLegend({ entries }: Props) {
  if (entries.length === 0) return null;
  return (
    <ul className="chart-legend">
      {entries.map((entry) => (
        <li key={entry.key} className="chart-legend-item" data-testid="chart-legend-item" data-dash={entry.dash ?? undefined} data-marker={entry.marker}>
          <Swatch entry={entry} />
          <span className="chart-legend-label">{entry.label}</span>
        </li>
      ))}
    </ul>
  );
}

export default memo(ChartLegend);
