"use client";
/**
 * The loss lines, drawn as one <path> each through the chart's own recharts
 * scales. Recharts' <Line> runs every point through its store and selectors
 * on each data change (about 13 ms a redraw here even at 50 points); live
 * data redraws every frame, so the lines are drawn here and recharts keeps
 * the axes, grid, zoom area and hover marks. A gap where loss was non-finite.
 * Each line has its own dash pattern and hollow markers, shifted per line,
 * drawn above every line: a line lying exactly on another stays visible.
 */
import { memo } from "react";
import { usePlotArea, useXAxisScale, useYAxisScale, type ScaleFunction } from "recharts";
import type { SampledLine } from "../../server/core/charts/chart-loss";
import { markerIndices, markerPath } from "../../server/core/charts/chart-line-style";

interface Props {
  lines: readonly SampledLine[];
  clipId: string;
  /** Lines in the whole chart: markers are shifted by line index over this. */
  lineCount: number;
}

function LinePaths({ lines, clipId, lineCount }: Props) {
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
            data-dash={line.dash ?? ""}
            d={pathData(data, x, y)}
            fill="none"
            stroke={line.color}
            strokeWidth={line.faded ? 1 : 1.5}
            strokeOpacity={line.faded ? 0.55 : 1}
            strokeDasharray={line.dash ?? undefined}
            strokeLinejoin="round"
          />
        ))}
        {lines.map(({ line, data }) => (
          <path
            key={`m:${line.id}`}
            className="chart-line-markers"
            data-line={line.label}
            data-marker={line.marker}
            d={markersData(data, line.index, lineCount, line.marker, x, y)}
            fill="none"
            stroke={line.color}
            strokeWidth={1.2}
            strokeOpacity={line.faded ? 0.55 : 1}
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

function markersData(data: SampledLine["data"], lineIndex: number, lineCount: number, shape: SampledLine["line"]["marker"], x: ScaleFunction, y: ScaleFunction): string {
  let d = "";
  for (const i of markerIndices(data.length, lineIndex, lineCount)) {
    const p = data[i]!;
    const px = p.y === null ? undefined : x(p.x);
    const py = p.y === null ? undefined : y(p.y);
    if (px !== undefined && py !== undefined) d += markerPath(shape, px, py);
  }
  return d;
}

export default memo(LinePaths);
