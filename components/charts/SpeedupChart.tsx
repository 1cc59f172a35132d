"use client";
/** Speed-up vs device count, one line per variant family, against the ideal y = N. */
import { memo, useMemo } from "react";
import { CartesianGrid, Line, LineChart, XAxis, YAxis } from "recharts";
import { speedupCsv } from "../model/chart-csv";
import { variantColor } from "../../server/core/charts/chart-palette";
import type { SpeedupChart as SpeedupModel } from "../../server/core/charts/chart-speedup";
import { tickText } from "../../server/core/charts/chart-svg";
import ChartCard from "./ChartCard";
import { useContentMemo } from "./use-content-memo";

interface Props {
  chart: SpeedupModel;
  height?: number;
}

interface Drawing {
  maxDevices: number;
  lines: Array<{ family: string; label: string; color: string; data: Array<{ x: number; y: number }> }>;
}

const IDEAL_COLOR = "var(--chart-reference)";

/** Redrawn only when the drawn numbers change (see useContentMemo). */
const SpeedupPlot = memo(function SpeedupPlot({ drawn, height }: { drawn: Drawing; height: number }) {
  const ideal = [
    { x: 1, y: 1 },
    { x: drawn.maxDevices, y: drawn.maxDevices },
  ];
  const ticks = Array.from({ length: drawn.maxDevices }, (_, i) => i + 1);
  return (
    <div className="chart-plot">
      <LineChart responsive style={{ width: "100%", height }} margin={{ top: 8, right: 16, bottom: 16, left: 4 }}>
        <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" />
        <XAxis type="number" dataKey="x" domain={[1, drawn.maxDevices]} ticks={ticks} allowDecimals={false} label={{ value: "devices", position: "insideBottom", offset: -10 }} />
        <YAxis width={56} dataKey="y" domain={[0, "auto"]} tickFormatter={tickText} label={{ value: "speed-up ×", angle: -90, position: "insideLeft", offset: 8 }} />
        <Line data={ideal} dataKey="y" name="ideal" stroke={IDEAL_COLOR} strokeDasharray="4 4" dot={false} activeDot={false} isAnimationActive={false} />
        {drawn.lines.map((line) => (
          <Line key={line.family} data={line.data} dataKey="y" name={line.label} stroke={line.color} strokeWidth={2} dot={{ r: 3 }} activeDot={false} isAnimationActive={false} />
        ))}
      </LineChart>
    </div>
  );
});

function SpeedupChart({ chart, height = 200 }: Props) {
  const drawn = useContentMemo(
    useMemo<Drawing>(
      () => ({
        maxDevices: chart.maxDevices,
        lines: chart.families.map((family, i) => ({
          family,
          label: family === "" ? "devices" : family,
          color: variantColor(i + 1),
          data: [{ x: 1, y: 1 }, ...chart.points.filter((p) => p.family === family).map((p) => ({ x: p.devices, y: p.speedup }))],
        })),
      }),
      [chart],
    ),
  );
  const legend = useMemo(
    () => [{ key: "ideal", label: "ideal (y = N)", color: IDEAL_COLOR, dashed: true }, ...drawn.lines.map((l) => ({ key: `f:${l.family}`, label: l.label, color: l.color }))],
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
      note={`Speed-up = ${per} of “${chart.baseline.tag}” ÷ that of the N-device variant; mean step_ms over ranks, warm-up step excluded.`}
    >
      <SpeedupPlot drawn={drawn} height={height} />
    </ChartCard>
  );
}

export default memo(SpeedupChart);
