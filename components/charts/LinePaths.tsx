"use client";
/**
 * The loss lines, drawn as one <path> each through the chart's own recharts
 * scales. Recharts' <Line> runs every point through its store and selectors
 * on each data change (about 13 ms a redraw here even at 50 points); live
 * data redraws every frame, so the lines are drawn here and recharts keeps
 * the axes, grid, zoom area and hover marks. A gap where loss was non-finite.
 */
import { memo } from "react";
import { usePlotArea, useXAxisScale, useYAxisScale, type ScaleFunction } from "recharts";
import type { SampledLine } from "../../server/core/charts/chart-loss";

interface Props {
  lines: readonly SampledLine[];
  clipId: string;
}

function LinePaths({ lines, clipId }: Props) {
  const x = useXAxisScale();
  const y = useYAxisScale();
  const plot = usePlotArea();
  if (!x || !y || !plot) return null;
  return (
    <g className="chart-lines">
      <clipPath id={clipId}>
        <rect x={plot.x} y={plot.y} width={plot.width} height={plot.height} />
      </clipPath>
      <g clipPath={`url(#${clipId})`}>
        {lines.map(({ line, data }) => (
          <path
            key={line.id}
            className="chart-line"
            data-line={line.label}
            d={pathData(data, x, y)}
            fill="none"
            stroke={line.color}
            strokeWidth={line.faded ? 1 : 1.5}
            strokeOpacity={line.faded ? 0.55 : 1}
            strokeDasharray={line.dashed ? "5 3" : undefined}
            strokeLinejoin="round"
          />
        ))}
      </g>
    </g>
  );
}

export function pathData(data: SampledLine["data"], x: ScaleFunction, y: ScaleFunction): string {
  let d = "";
  let pen = false;
  for (const p of data) {
    const px = p.y === null ? undefined : x(p.x);
    const py = p.y === null ? undefined : y(p.y);
    if (px === undefined || py === undefined) {
      pen = false;
      continue;
    }
    d += `${pen ? "L" : "M"}${Math.round(px * 10) / 10},${Math.round(py * 10) / 10}`;
    pen = true;
  }
  return d;
}

export default memo(LinePaths);
