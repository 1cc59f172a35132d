"use client";
/**
 * Whiskers over bars: from the fastest to the slowest step, with a tick at
 * the median (the same steps as the bar's means, warm-up left out), so a
 * bar on a noisy host shows how far one step can be from another.
 */
import { DefaultZIndexes, useXAxisScale, useYAxisScale, ZIndexLayer } from "recharts";

export interface SpreadMark {
  key: string;
  tag: string;
  rank: number;
  min: number;
  median: number;
  max: number;
  title: string;
}

export default function SpreadOverlay({ marks }: { marks: readonly SpreadMark[] }) {
  const xScale = useXAxisScale();
  const yScale = useYAxisScale();
  if (!xScale || !yScale) return null;
  // Above the bars (recharts draws series in z-index layers): the part of a whisker inside its bar must show.
  return (
    <ZIndexLayer zIndex={DefaultZIndexes.bar + 1}>
    <g className="chart-spread-overlay">
      {marks.map((mark) => {
        const x0 = xScale(mark.key, { position: "start" });
        const x1 = xScale(mark.key, { position: "end" });
        const yMin = yScale(mark.min);
        const yMed = yScale(mark.median);
        const yMax = yScale(mark.max);
        if (x0 === undefined || x1 === undefined || yMin === undefined || yMed === undefined || yMax === undefined) return null;
        const cx = (x0 + x1) / 2;
        const cap = Math.max(3, Math.min(8, (x1 - x0) / 4));
        return (
          <g key={mark.key} data-testid="chart-spread" data-variant={mark.tag} data-rank={mark.rank} data-min={mark.min} data-median={mark.median} data-max={mark.max}>
            <title>{mark.title}</title>
            <path
              d={`M${cx},${yMin}L${cx},${yMax}M${cx - cap},${yMin}L${cx + cap},${yMin}M${cx - cap},${yMax}L${cx + cap},${yMax}M${cx - cap * 1.5},${yMed}L${cx + cap * 1.5},${yMed}`}
              stroke="var(--chart-spread)"
              strokeWidth={1.5}
              fill="none"
            />
          </g>
        );
      })}
    </g>
    </ZIndexLayer>
  );
}
