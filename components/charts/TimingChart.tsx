"use client";
/**
 * Per-device stacked step-time bars (ms): devices side by side within a
 * variant, variants side by side; a whisker over each bar spans its fastest
 * to slowest step with a tick at the median. Tick labels are laid out from
 * the plot's width so they never overlap (chart-axis-layout).
 */
import { memo, useMemo, useRef } from "react";
import { Bar, BarChart, CartesianGrid, XAxis, YAxis } from "recharts";
import { timingCsv } from "./model/chart-csv";
import { categoryTickLayout, valueAxisWidth } from "../../server/core/charts/chart-axis-layout";
import { WARMUP_RULE } from "../../server/core/charts/chart-stats";
import { niceTicks, tickText } from "../../server/core/charts/chart-svg";
import type { PhaseInfo, TimingChart as TimingModel } from "../../server/core/charts/chart-timing";
import BarOverlay, { type OverlayBar } from "./BarOverlay";
import ChartCard from "./ChartCard";
import SpreadOverlay, { type SpreadMark } from "./SpreadOverlay";
import { useContentMemo } from "./use-content-memo";
import { useElementWidth } from "./use-element-width";

interface Props {
  chart: TimingModel;
  height?: number;
}

interface Drawing {
  data: Array<Record<string, string | number>>;
  overlay: OverlayBar[];
  spread: SpreadMark[];
  phases: PhaseInfo[];
  /** Top of the y axis: the tallest bar or whisker, rounded up to a tick. */
  yMax: number;
}

const barKey = (tag: string, rank: number): string => `${tag}\u0000${rank}`;
/** Plot width lost to the y axis and margins. */
const AXIS_PX = 56 + 16 + 4;

function ms(value: number): string {
  return `${value.toFixed(3)} ms`;
}

function drawing(chart: TimingModel): Drawing {
  const top = Math.max(0, ...chart.bars.map((b) => Math.max(b.total, b.spread?.max ?? 0)));
  const ticks = niceTicks(0, top > 0 ? top : 1, 5);
  const last = ticks.at(-1) ?? 1;
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : last;
  return {
    data: chart.bars.map((b) => ({ key: barKey(b.tag, b.rank), label: b.label, ...b.ms })),
    overlay: chart.bars.map((b) => ({
      key: barKey(b.tag, b.rank),
      tag: b.tag,
      rank: b.rank,
      total: b.total,
      title: [
        `${b.label}: ${ms(b.total)} per step (median per phase)`,
        ...(b.spread ? [`${b.spreadMetric}: min ${ms(b.spread.min)}, median ${ms(b.spread.median)}, max ${ms(b.spread.max)} over ${b.spread.count} steps`] : []),
        ...chart.phases.map((p) => `${p.label}: ${ms(b.ms[p.key])}`),
      ].join("\n"),
    })),
    spread: chart.bars.flatMap((b) =>
      b.spread
        ? [{ key: barKey(b.tag, b.rank), tag: b.tag, rank: b.rank, ...b.spread, title: `${b.label} ${b.spreadMetric}: min ${ms(b.spread.min)}, median ${ms(b.spread.median)}, max ${ms(b.spread.max)} (${b.spread.count} steps)` }]
        : [],
    ),
    phases: chart.phases,
    yMax: Number((last < top ? last + step : last).toPrecision(12)),
  };
}

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const TimingPlot = memo(function TimingPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  const box = useRef<HTMLDivElement>(null);
  const width = useElementWidth(box);
  const labels = new Map(drawn.data.map((d) => [String(d.key), String(d.label)]));
  const layout = categoryTickLayout([...labels.values()], Math.max(0, (width || 400) - AXIS_PX));
  return (
    <div className="chart-plot" ref={box} data-tick-angle={layout.angle}>
      <BarChart responsive style={{ width: "100%", height: height + layout.height - 30 }} data={drawn.data} margin={{ top: 8, right: 16, bottom: 8, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" vertical={false} />
        <XAxis
          dataKey="key"
          type="category"
          interval={layout.interval}
          tickFormatter={(key: string) => labels.get(key) ?? key}
          angle={layout.angle}
          textAnchor={layout.angle === 0 ? "middle" : "end"}
          height={layout.height}
        />
        <YAxis width={valueAxisWidth(niceTicks(0, drawn.yMax).map(tickText))} domain={[0, drawn.yMax]} tickFormatter={tickText} label={{ value: "ms", angle: -90, position: "insideLeft", offset: 8 }} />
        {drawn.phases.map((phase) => (
          <Bar key={phase.key} dataKey={phase.key} name={phase.label} stackId="step" fill={phase.color} isAnimationActive={false} />
        ))}
        <SpreadOverlay marks={drawn.spread} />
        <BarOverlay bars={drawn.overlay} />
      </BarChart>
    </div>
  );
});

function TimingChart({ chart, height = 220 }: Props) {
  const drawn = useContentMemo(useMemo(() => drawing(chart), [chart]));
  const legend = useMemo(
    () => [
      ...drawn.phases.map((p) => ({ key: p.key, label: p.label, color: p.color })),
      ...(drawn.spread.length > 0 ? [{ key: "spread", label: "min–max step, median tick", color: "var(--chart-spread)", whisker: true }] : []),
    ],
    [drawn],
  );
  return (
    <ChartCard
      testId="chart-timing"
      title="Step time per device (ms)"
      points={chart.points}
      legend={legend}
      csv={() => timingCsv(chart)}
      note={`Bars: median per phase, the number the verdicts read; whiskers: fastest to slowest step, tick at the median step (step_ms; apply_ms for a replica that logs only that); ${WARMUP_RULE}. comm_ms overlaps backward_ms (allreduce runs during backward), so it is drawn as the part of backward it covers.`}
    >
      <TimingPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(TimingChart);
