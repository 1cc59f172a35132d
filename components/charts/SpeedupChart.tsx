"use client";
/**
 * Speed-up vs device count, one line per variant family, against the ideal
 * y = N. A speed-up the devices cannot give (chart-speedup: super-linear on
 * shared or emulated devices, or beyond the host's cores) is not a result:
 * it is left off its line, drawn as a red cross marked "noise", and listed
 * under the chart with why.
 */
import { memo, useMemo } from "react";
import { CartesianGrid, DefaultZIndexes, Line, LineChart, XAxis, YAxis, useXAxisScale, useYAxisScale, ZIndexLayer } from "recharts";
import { speedupCsv } from "../model/chart-csv";
import { variantColor } from "../../server/core/charts/chart-palette";
import type { SpeedupChart as SpeedupModel } from "../../server/core/charts/chart-speedup";
import { niceTicks, tickText } from "../../server/core/charts/chart-svg";
import ChartCard from "./ChartCard";
import { useContentMemo } from "./use-content-memo";

interface Props {
  chart: SpeedupModel;
  height?: number;
}

interface NoisePoint {
  tag: string;
  x: number;
  y: number;
  reason: string;
}

interface Drawing {
  maxDevices: number;
  yMax: number;
  lines: Array<{ family: string; label: string; color: string; data: Array<{ x: number; y: number }> }>;
  noise: NoisePoint[];
}

const IDEAL_COLOR = "var(--chart-reference)";
const NOISE_COLOR = "var(--chart-noise)";

/** Crosses where a speed-up was flagged as noise, through the chart's own scales. */
function NoiseMarks({ points }: { points: readonly NoisePoint[] }) {
  const x = useXAxisScale();
  const y = useYAxisScale();
  if (!x || !y) return null;
  return (
    <ZIndexLayer zIndex={DefaultZIndexes.line + 1}>
    <g className="chart-noise-marks">
      {points.map((p) => {
        const px = x(p.x);
        const py = y(p.y);
        if (px === undefined || py === undefined) return null;
        return (
          <g key={p.tag} data-testid="chart-noise-point" data-variant={p.tag} data-speedup={p.y}>
            <title>{`${p.tag}: ${p.reason}`}</title>
            <path d={`M${px - 5},${py - 5}L${px + 5},${py + 5}M${px + 5},${py - 5}L${px - 5},${py + 5}`} stroke={NOISE_COLOR} strokeWidth={2} fill="none" />
            <text x={px + 8} y={py + 4} fill={NOISE_COLOR}>
              noise
            </text>
          </g>
        );
      })}
    </g>
    </ZIndexLayer>
  );
}

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const SpeedupPlot = memo(function SpeedupPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  const ideal = [
    { x: 1, y: 1 },
    { x: drawn.maxDevices, y: drawn.maxDevices },
  ];
  const ticks = Array.from({ length: drawn.maxDevices }, (_, i) => i + 1);
  return (
    <div className="chart-plot">
      <LineChart responsive style={{ width: "100%", height }} margin={{ top: 8, right: 40, bottom: 16, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" />
        <XAxis type="number" dataKey="x" domain={[1, drawn.maxDevices]} ticks={ticks} allowDecimals={false} label={{ value: "devices", position: "insideBottom", offset: -10 }} />
        <YAxis width={56} dataKey="y" domain={[0, drawn.yMax]} tickFormatter={tickText} label={{ value: "speed-up ×", angle: -90, position: "insideLeft", offset: 8 }} />
        <Line data={ideal} dataKey="y" name="ideal" stroke={IDEAL_COLOR} strokeDasharray="4 4" dot={false} activeDot={false} isAnimationActive={false} />
        {drawn.lines.map((line) => (
          <Line key={line.family} data={line.data} dataKey="y" name={line.label} stroke={line.color} strokeWidth={2} dot={{ r: 3 }} activeDot={false} isAnimationActive={false} />
        ))}
        <NoiseMarks points={drawn.noise} />
      </LineChart>
    </div>
  );
});

function drawing(chart: SpeedupModel): Drawing {
  const top = Math.max(chart.maxDevices, ...chart.points.map((p) => p.speedup).filter(Number.isFinite));
  const ticks = niceTicks(0, top, 5);
  const last = ticks.at(-1) ?? top;
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : 1;
  return {
    maxDevices: chart.maxDevices,
    yMax: Number((last < top ? last + step : last).toPrecision(12)),
    lines: chart.families.map((family, i) => ({
      family,
      label: family === "" ? "devices" : family,
      color: variantColor(i + 1),
      data: [{ x: 1, y: 1 }, ...chart.points.filter((p) => p.family === family && p.noise === null).map((p) => ({ x: p.devices, y: p.speedup }))],
    })),
    noise: chart.points.flatMap((p) => (p.noise === null ? [] : [{ tag: p.tag, x: p.devices, y: p.speedup, reason: p.noise }])),
  };
}

function SpeedupChart({ chart, height = 200 }: Props) {
  const drawn = useContentMemo(useMemo<Drawing>(() => drawing(chart), [chart]));
  const legend = useMemo(
    () => [
      { key: "ideal", label: "ideal (y = N)", color: IDEAL_COLOR, dashed: true },
      ...drawn.lines.map((l) => ({ key: `f:${l.family}`, label: l.label, color: l.color })),
      ...(drawn.noise.length > 0 ? [{ key: "noise", label: "noise: impossible on these devices, not a result", color: NOISE_COLOR }] : []),
    ],
    [drawn],
  );
  const per = chart.basis === "sample" ? "time per sample" : "time per step (no samples logged; same global batch assumed)";
  return (
    <ChartCard
      testId="chart-speedup"
      title="Speed-up vs device count (×)"
      points={chart.pointsUsed}
      legend={legend}
      csv={() => speedupCsv(chart)}
      data={{ "data-noise": String(drawn.noise.length) }}
      note={
        <>
          Speed-up = {per} of “{chart.baseline.tag}” ÷ that of the N-device variant; mean step_ms over ranks, warm-up step excluded.
          {drawn.noise.length > 0 ? (
            <ul className="chart-noise-list">
              {drawn.noise.map((p) => (
                <li key={p.tag} data-testid="chart-noise-flag" data-variant={p.tag}>
                  {p.tag}: {p.reason}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      }
    >
      <SpeedupPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(SpeedupChart);
