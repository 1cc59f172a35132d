"use client";
/**
 * Speed-up vs device count, one line per variant family, against the ideal
 * y = N. A speed-up the devices cannot give (chart-speedup: super-linear on
 * shared or emulated devices, or beyond the host's cores) is not a result:
 * it is left off its line, drawn as a red cross marked "noise", and listed
 * under the chart with why. Each drawn point has a whisker: the speed-ups its
 * steps allow (chart-speedup's range), so a noisy host shows as a long one.
 */
import { memo, useMemo } from "react";
import { CartesianGrid, DefaultZIndexes, Line, LineChart, XAxis, YAxis, useXAxisScale, useYAxisScale, ZIndexLayer } from "recharts";
import { speedupCsv } from "./model/chart-csv";
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

interface RangeMark {
  tag: string;
  x: number;
  low: number;
  high: number;
}

interface Drawing {
  maxDevices: number;
  yMax: number;
  ranges: RangeMark[];
  lines: Array<{ family: string; label: string; color: string; data: Array<{ x: number; y: number }> }>;
  noise: NoisePoint[];
}

const IDEAL_COLOR = "var(--chart-reference)";
const NOISE_COLOR = "var(--chart-noise)";
const SPREAD_COLOR = "var(--chart-spread)";

/** Whiskers from the lowest to the highest speed-up the steps allow, through the chart's own scales. */
function RangeMarks({ ranges, yMax }: { ranges: readonly RangeMark[]; yMax: number }) {
  const x = useXAxisScale();
  const y = useYAxisScale();
  if (!x || !y) return null;
  return (
    <ZIndexLayer zIndex={DefaultZIndexes.line + 1}>
      <g className="chart-speedup-ranges">
        {ranges.map((r) => {
          const px = x(r.x);
          const [lo, hi] = [y(r.low), y(Math.min(r.high, yMax))];
          if (px === undefined || lo === undefined || hi === undefined) return null;
          return (
            <g key={r.tag} data-testid="chart-speedup-range" data-variant={r.tag} data-low={r.low} data-high={r.high}>
              <title>{`${r.tag}: ${Number(r.low.toPrecision(3))}× to ${Number(r.high.toPrecision(3))}× over its steps`}</title>
              <path d={`M${px},${lo}L${px},${hi}M${px - 4},${lo}L${px + 4},${lo}M${px - 4},${hi}L${px + 4},${hi}`} stroke={SPREAD_COLOR} strokeWidth={1.5} fill="none" />
            </g>
          );
        })}
      </g>
    </ZIndexLayer>
  );
}

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
        <XAxis type="number" dataKey="x" domain={[1 - DODGE_DEVICES, drawn.maxDevices + DODGE_DEVICES]} ticks={ticks} allowDecimals={false} label={{ value: "devices", position: "insideBottom", offset: -10 }} />
        <YAxis width={56} dataKey="y" domain={[0, drawn.yMax]} tickFormatter={tickText} label={{ value: "speed-up ×", angle: -90, position: "insideLeft", offset: 8 }} />
        <Line data={ideal} dataKey="y" name="ideal" stroke={IDEAL_COLOR} strokeDasharray="4 4" dot={false} activeDot={false} isAnimationActive={false} />
        {drawn.lines.map((line) => (
          <Line key={line.family} data={line.data} dataKey="y" name={line.label} stroke={line.color} strokeWidth={2} dot={{ r: 4, fill: "var(--bg)", strokeWidth: 2 }} activeDot={false} isAnimationActive={false} />
        ))}
        <RangeMarks ranges={drawn.ranges} yMax={drawn.yMax} />
        <NoiseMarks points={drawn.noise} />
      </LineChart>
    </div>
  );
});

/**
 * How far a family's points sit beside the device count they belong to: DDP ×4 and DataParallel ×4 at the
 * same speed-up would otherwise draw one dot over the other, and one of them would not be seen at all.
 */
export const DODGE_DEVICES = 0.08;

export function dodge(familyIndex: number, families: number): number {
  return families <= 1 ? 0 : (familyIndex - (families - 1) / 2) * DODGE_DEVICES;
}

function drawing(chart: SpeedupModel): Drawing {
  const drawnPoints = chart.points.filter((p) => p.noise === null);
  const shift = (family: string) => dodge(chart.families.indexOf(family), chart.families.length);
  const ranges = drawnPoints.flatMap((p) => (p.range && Number.isFinite(p.range.high) ? [{ tag: p.tag, x: p.devices + shift(p.family), low: p.range.low, high: p.range.high }] : []));
  const pointsTop = Math.max(chart.maxDevices, ...chart.points.map((p) => p.speedup).filter(Number.isFinite));
  // Whiskers may raise the axis, but one wild step must not flatten every line: at most twice the points' top (longer whiskers are cut there, their title says how far they go).
  const top = Math.max(pointsTop, Math.min(2 * pointsTop, Math.max(0, ...ranges.map((r) => r.high))));
  const ticks = niceTicks(0, top, 5);
  const last = ticks.at(-1) ?? top;
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : 1;
  return {
    maxDevices: chart.maxDevices,
    ranges,
    yMax: Number((last < top ? last + step : last).toPrecision(12)),
    lines: chart.families.map((family, i) => ({
      family,
      label: family === "" ? "devices" : family,
      color: variantColor(i + 1),
      data: [{ x: 1, y: 1 }, ...chart.points.filter((p) => p.family === family && p.noise === null).map((p) => ({ x: p.devices + shift(family), y: p.speedup }))],
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
          Speed-up = {per} of “{chart.baseline.tag}” ÷ that of the N-device variant; median step_ms of each rank, averaged over ranks, warm-up step excluded. Whiskers: the
          speed-ups single steps allow (one device&apos;s fastest step against the variant&apos;s slowest, to the reverse).
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
