"use client";
/** The exact stored values of the real points nearest the cursor, one per line (never a downsampled point). */
import type { LossLine } from "../../server/core/charts/chart-loss";
import type { NearestPoint } from "../../server/core/charts/downsample";

export interface HoverHit {
  line: LossLine;
  point: NearestPoint;
}

interface Props {
  hits: readonly HoverHit[] | null;
}

export default function HoverReadout({ hits }: Props) {
  return (
    <div className="chart-hover" data-testid="chart-hover" aria-live="off">
      {hits === null ? (
        <span className="chart-hint">Hover for exact values · drag across the chart to zoom · double-click to reset</span>
      ) : (
        hits.map(({ line, point }) => (
          <span key={line.id} className="chart-hover-item" data-step={point.step} data-value={point.value ?? ""}>
            <span className="chart-swatch" style={{ backgroundColor: line.color, borderColor: line.color }} aria-hidden="true" />
            {line.label}: step {point.step}, loss {point.value === null ? "— (non-finite)" : String(point.value)}
          </span>
        ))
      )}
    </div>
  );
}
