"use client";
/** Grouped bars, one per device, variants side by side: samples per step or peak memory (one memory source per chart). */
import { memo, useMemo, useRef, type ReactNode } from "react";
import { Bar, BarChart, CartesianGrid, XAxis, YAxis } from "recharts";
import { deviceBarsCsv } from "./model/chart-csv";
import type { DeviceBarsChart as DeviceBarsModel } from "../../server/core/charts/chart-devices";
import { deviceColor } from "../../server/core/charts/chart-palette";
import { categoryTickLayout, valueAxisWidth } from "../../server/core/charts/chart-axis-layout";
import { niceTicks, tickText } from "../../server/core/charts/chart-svg";
import ChartCard from "./ChartCard";
import { useContentMemo } from "./use-content-memo";
import { useElementWidth } from "./use-element-width";

interface Props {
  testId: string;
  title: string;
  unit: string;
  chart: DeviceBarsModel;
  note: ReactNode;
  height?: number;
  /** What a memory chart's values measure (the plans' memory source). */
  source?: string | null;
}

interface Drawing {
  /** Wide enough for the widest tick label beside the axis title. */
  axisWidth: number;
  data: Array<Record<string, string | number | null>>;
  ranks: number[];
  unit: string;
}

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const DeviceBarsPlot = memo(function DeviceBarsPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  const box = useRef<HTMLDivElement>(null);
  const width = useElementWidth(box);
  const layout = categoryTickLayout(
    drawn.data.map((d) => String(d.label)),
    Math.max(0, (width || 400) - 76),
  );
  return (
    <div className="chart-plot" ref={box} data-tick-angle={layout.angle}>
      <BarChart responsive style={{ width: "100%", height: height + layout.height - 30 }} data={drawn.data} margin={{ top: 8, right: 16, bottom: 8, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" type="category" interval={layout.interval} angle={layout.angle} textAnchor={layout.angle === 0 ? "middle" : "end"} height={layout.height} />
        <YAxis width={drawn.axisWidth} tickFormatter={tickText} label={{ value: drawn.unit, angle: -90, position: "insideLeft", offset: 8 }} />
        {drawn.ranks.map((rank, i) => (
          <Bar key={rank} dataKey={`r${rank}`} name={`device ${rank}`} fill={deviceColor(i)} isAnimationActive={false} />
        ))}
      </BarChart>
    </div>
  );
});

function DeviceBarsChart({ testId, title, unit, chart, note, height = 180, source = null }: Props) {
  const drawn = useContentMemo(
    useMemo<Drawing>(
      () => ({
        data: chart.rows.map((row) => {
          const entry: Record<string, string | number | null> = { label: row.label };
          chart.ranks.forEach((rank, i) => (entry[`r${rank}`] = row.values[i] ?? null));
          return entry;
        }),
        ranks: chart.ranks,
        unit,
        axisWidth: valueAxisWidth(niceTicks(0, Math.max(0, ...chart.rows.flatMap((row) => row.values.filter((v): v is number => v !== null && Number.isFinite(v))))).map(tickText)),
      }),
      [chart, unit],
    ),
  );
  const legend = useMemo(() => drawn.ranks.map((rank, i) => ({ key: String(rank), label: `device ${rank}`, color: deviceColor(i) })), [drawn]);
  return (
    <ChartCard
      testId={testId}
      title={title}
      points={chart.points}
      legend={legend}
      csv={() => deviceBarsCsv(chart)}
      note={note}
      data={source === null ? { "data-unit": unit } : { "data-unit": unit, "data-memory-source": source }}
    >
      <DeviceBarsPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(DeviceBarsChart);
