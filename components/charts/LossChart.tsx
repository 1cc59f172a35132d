"use client";
/**
 * Loss vs step, one line per variant (and per compared run). Draws at most
 * `budget` points per line, re-sampled from the full data for the visible
 * window (drag across the plot to zoom, double-click to reset); hover reads
 * the nearest real points by binary search over the full series.
 * The lines are drawn by LinePaths through recharts' scales (see there why);
 * the axes get round domains so live points rarely move them.
 */
import { memo, useId, useMemo, useReducer, useRef, useState, type MouseEvent } from "react";
import { CartesianGrid, LineChart, ReferenceArea, ReferenceDot, ReferenceLine, XAxis, YAxis } from "recharts";
import { extent, stableDomain } from "../model/chart-domain";
import { lossCsv } from "../model/chart-csv";
import { sampleLoss, type LossLine } from "../../server/core/charts/chart-loss";
import { tickText } from "../../server/core/charts/chart-svg";
import { NO_ZOOM, zoomReducer } from "../model/chart-zoom";
import { nearestPoint } from "../../server/core/charts/downsample";
import ChartCard from "./ChartCard";
import HoverReadout, { type HoverHit } from "./HoverReadout";
import LinePaths from "./LinePaths";
import { EMPTY_PROBE, pointerX, ScaleProbe, type PlotProbe } from "./plot-pointer";

interface Props {
  lines: readonly LossLine[];
  /** Store version the lines were read at (their buffers grow in place). */
  version: number;
  /** Points per line; null draws every real point (the benchmark's comparison). */
  budget: number | null;
  height?: number;
}

function LossChart({ lines, version, budget, height = 220 }: Props) {
  const [zoom, dispatch] = useReducer(zoomReducer, NO_ZOOM);
  const [hoverX, setHoverX] = useState<number | null>(null);
  const probe = useRef<PlotProbe>(EMPTY_PROBE);
  const frame = useRef<number | null>(null);
  const latestX = useRef<number | null>(null);

  // The buffers behind `lines` grow in place: `version` says when they did.
  const sampled = useMemo(() => sampleLoss(lines, zoom.window, budget), [lines, version, zoom.window, budget]);
  // Round domains: a live point inside them redraws the lines only. A zoomed x axis shows exactly the selection.
  const bounds = useMemo(() => extent(sampled.lines), [sampled]);
  const xLo = zoom.window ? zoom.window.x0 : bounds ? bounds.x[0] : 0;
  const xHi = zoom.window ? zoom.window.x1 : bounds ? stableDomain(bounds.x[0], bounds.x[1], 6)[1] : 1;
  const [yLo, yHi] = bounds ? stableDomain(bounds.y[0], bounds.y[1]) : [0, 1];
  const clipId = `loss-clip-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const hits = useMemo<HoverHit[] | null>(() => {
    if (hoverX === null) return null;
    return lines.flatMap((line) => {
      const point = nearestPoint(line.series, hoverX);
      return point ? [{ line, point }] : [];
    });
  }, [lines, version, hoverX]);

  // Pointer moves are folded into one state update per animation frame.
  const track = (event: MouseEvent<HTMLDivElement>) => {
    latestX.current = pointerX(probe.current, event.clientX, event.currentTarget);
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      const x = latestX.current;
      setHoverX(x);
      if (x !== null) dispatch({ type: "move", x });
    });
  };
  const start = (event: MouseEvent<HTMLDivElement>) => {
    if (event.button !== 0) return;
    const x = pointerX(probe.current, event.clientX, event.currentTarget);
    if (x !== null) dispatch({ type: "start", x });
  };
  const leave = () => {
    latestX.current = null;
    setHoverX(null);
    dispatch({ type: "cancel" });
  };

  const legend = useMemo(() => lines.map((l) => ({ key: l.id, label: l.label, color: l.color, dashed: l.dashed, faded: l.faded })), [lines]);
  const visible = zoom.window;
  const reset = visible ? (
    <button type="button" className="chart-button" data-testid="chart-zoom-reset" onClick={() => dispatch({ type: "reset" })}>
      reset zoom
    </button>
  ) : null;
  const drawnNote = budget !== null && sampled.drawnPoints < sampled.realPoints ? `; ${sampled.drawnPoints.toLocaleString("en-US")} drawn (min/max per bucket)` : "";

  return (
    <ChartCard
      testId="chart-loss"
      title="Loss vs step"
      points={sampled.realPoints}
      legend={legend}
      csv={() => lossCsv(lines, visible)}
      actions={reset}
      note={`${sampled.realPoints.toLocaleString("en-US")} real points${visible ? ` in steps ${tickText(visible.x0)}–${tickText(visible.x1)}` : ""}${drawnNote}. One line per variant, per rank where each rank logged loss.`}
    >
      <div
        className="chart-plot chart-plot-zoomable"
        data-drawn-points={sampled.drawnPoints}
        onMouseDown={start}
        onMouseMove={track}
        onMouseUp={() => dispatch({ type: "end" })}
        onMouseLeave={leave}
        onDoubleClick={() => dispatch({ type: "reset" })}
      >
        <LineChart responsive style={{ width: "100%", height }} margin={{ top: 8, right: 16, bottom: 16, left: 4 }}>
          <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="x"
            domain={[xLo, xHi]}
            allowDataOverflow
            tickFormatter={tickText}
            label={{ value: "step", position: "insideBottom", offset: -10 }}
          />
          <YAxis type="number" width={56} domain={[yLo, yHi]} allowDataOverflow tickFormatter={tickText} label={{ value: "loss", angle: -90, position: "insideLeft", offset: 8 }} />
          <LinePaths lines={sampled.lines} clipId={clipId} />
          {zoom.drag ? <ReferenceArea x1={zoom.drag.from} x2={zoom.drag.to} fill="var(--chart-selection)" fillOpacity={0.12} ifOverflow="hidden" /> : null}
          {hits && hits[0] ? <ReferenceLine x={hits[0].point.step} stroke="var(--chart-cursor)" strokeDasharray="2 2" ifOverflow="hidden" /> : null}
          {hits?.map(({ line, point }) =>
            point.value === null ? null : <ReferenceDot key={line.id} x={point.step} y={point.value} r={3} fill={line.color} stroke="var(--chart-dot-ring)" ifOverflow="hidden" />,
          )}
          <ScaleProbe probe={probe} />
        </LineChart>
      </div>
      <HoverReadout hits={hits} />
    </ChartCard>
  );
}

export default memo(LossChart);
