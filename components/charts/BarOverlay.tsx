"use client";
/**
 * One transparent rectangle over each stacked bar, spanning its category and
 * its full height: the element tests find as `chart-bar` (one per device per
 * variant, whatever segments it has) and whose <title> gives its exact
 * numbers on hover.
 */
import { DefaultZIndexes, useXAxisScale, useYAxisScale, ZIndexLayer } from "recharts";

export interface OverlayBar {
  key: string;
  tag: string;
  rank: number;
  total: number;
  title: string;
}

export default function BarOverlay({ bars }: { bars: readonly OverlayBar[] }) {
  const xScale = useXAxisScale();
  const yScale = useYAxisScale();
  if (!xScale || !yScale) return null;
  const base = yScale(0);
  // Topmost (recharts draws series in z-index layers), so the pointer finds the rectangle and its <title>.
  return (
    <ZIndexLayer zIndex={DefaultZIndexes.bar + 2}>
    <g className="chart-bar-overlay">
      {bars.map((bar) => {
        const x0 = xScale(bar.key, { position: "start" });
        const x1 = xScale(bar.key, { position: "end" });
        const top = yScale(bar.total);
        if (x0 === undefined || x1 === undefined || top === undefined || base === undefined) return null;
        return (
          <rect
            key={bar.key}
            data-testid="chart-bar"
            data-variant={bar.tag}
            data-rank={bar.rank}
            data-total={bar.total}
            x={x0}
            y={Math.min(top, base)}
            width={Math.max(1, x1 - x0)}
            height={Math.max(1, Math.abs(base - top))}
            fill="transparent"
          >
            <title>{bar.title}</title>
          </rect>
        );
      })}
    </g>
    </ZIndexLayer>
  );
}
