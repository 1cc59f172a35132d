"use client";
/** Per-device stacked step-time bars (ms): devices side by side within a variant, variants side by side. */
import { memo, useMemo } from "react";
import { Bar, BarChart, CartesianGrid, XAxis, YAxis } from "recharts";
import { timingCsv } from "../model/chart-csv";
import { WARMUP_RULE } from "../../server/core/charts/chart-stats";
import { tickText } from "../../server/core/charts/chart-svg";
import type { PhaseInfo, TimingChart as TimingModel } from "../../server/core/charts/chart-timing";
import BarOverlay, { type OverlayBar } from "./BarOverlay";
import ChartCard from "./ChartCard";
import { useContentMemo } from "./use-content-memo";

interface Props {
  chart: TimingModel;
  height?: number;
}

interface Drawing {
  data: Array<Record<string, string | number>>;
  overlay: OverlayBar[];
  phases: PhaseInfo[];
}

const barKey = (tag: string, rank: number): string => `${tag}\u0000${rank}`;

function drawing(chart: TimingModel): Drawing {
  return {
    data: chart.bars.map((b) => ({ key: barKey(b.tag, b.rank), label: b.label, ...b.ms })),
    overlay: chart.bars.map((b) => ({
      key: barKey(b.tag, b.rank),
      tag: b.tag,
      rank: b.rank,
      total: b.total,
      title: [`${b.label}: ${b.total.toFixed(3)} ms per step`, ...chart.phases.map((p) => `${p.label}: ${b.ms[p.key].toFixed(3)} ms`)].join("\n"),
    })),
    phases: chart.phases,
  };
}

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const TimingPlot = memo(function TimingPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  const labels = new Map(drawn.data.map((d) => [String(d.key), String(d.label)]));
  const many = drawn.data.length > 6;
  return (
    <div className="chart-plot">
      <BarChart responsive style={{ width: "100%", height: height + (many ? 30 : 0) }} data={drawn.data} margin={{ top: 8, right: 16, bottom: many ? 40 : 8, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" vertical={false} />
        <XAxis
          dataKey="key"
          type="category"
          interval={0}
          tickFormatter={(key: string) => labels.get(key) ?? key}
          angle={many ? -35 : 0}
          textAnchor={many ? "end" : "middle"}
          height={many ? 60 : 30}
        />
        <YAxis width={56} tickFormatter={tickText} label={{ value: "ms", angle: -90, position: "insideLeft", offset: 8 }} />
        {drawn.phases.map((phase) => (
          <Bar key={phase.key} dataKey={phase.key} name={phase.label} stackId="step" fill={phase.color} isAnimationActive={false} />
        ))}
        <BarOverlay bars={drawn.overlay} />
      </BarChart>
    </div>
  );
});

function TimingChart({ chart, height = 220 }: Props) {
  const drawn = useContentMemo(useMemo(() => drawing(chart), [chart]));
  const legend = useMemo(() => drawn.phases.map((p) => ({ key: p.key, label: p.label, color: p.color })), [drawn]);
  return (
    <ChartCard
      testId="chart-timing"
      title="Step time per device (ms)"
      points={chart.points}
      legend={legend}
      csv={() => timingCsv(chart)}
      note={`Mean per phase; ${WARMUP_RULE}. comm_ms overlaps backward_ms (allreduce runs during backward), so it is drawn as the part of backward it covers and a bar's height is the mean step time.`}
    >
      <TimingPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(TimingChart);
