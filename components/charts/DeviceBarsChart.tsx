"use client";
/** Grouped bars, one per device, variants side by side: samples per step or peak memory. */
import { memo, useMemo, type ReactNode } from "react";
import { Bar, BarChart, CartesianGrid, XAxis, YAxis } from "recharts";
import { deviceBarsCsv } from "../model/chart-csv";
import type { DeviceBarsChart as DeviceBarsModel } from "../../server/core/charts/chart-devices";
import { deviceColor } from "../../server/core/charts/chart-palette";
import { tickText } from "../../server/core/charts/chart-svg";
import ChartCard from "./ChartCard";
import { useContentMemo } from "./use-content-memo";

interface Props {
  testId: string;
  title: string;
  unit: string;
  chart: DeviceBarsModel;
  note: ReactNode;
  height?: number;
}

interface Drawing {
  data: Array<Record<string, string | number | null>>;
  ranks: number[];
  unit: string;
}

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const DeviceBarsPlot = memo(function DeviceBarsPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  return (
    <div className="chart-plot">
      <BarChart responsive style={{ width: "100%", height }} data={drawn.data} margin={{ top: 8, right: 16, bottom: 8, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" type="category" interval={0} />
        <YAxis width={56} tickFormatter={tickText} label={{ value: drawn.unit, angle: -90, position: "insideLeft", offset: 8 }} />
        {drawn.ranks.map((rank, i) => (
          <Bar key={rank} dataKey={`r${rank}`} name={`device ${rank}`} fill={deviceColor(i)} isAnimationActive={false} />
        ))}
      </BarChart>
    </div>
  );
});

function DeviceBarsChart({ testId, title, unit, chart, note, height = 180 }: Props) {
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
      }),
      [chart, unit],
    ),
  );
  const legend = useMemo(() => drawn.ranks.map((rank, i) => ({ key: String(rank), label: `device ${rank}`, color: deviceColor(i) })), [drawn]);
  return (
    <ChartCard testId={testId} title={title} points={chart.points} legend={legend} csv={() => deviceBarsCsv(chart)} note={note}>
      <DeviceBarsPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(DeviceBarsChart);
