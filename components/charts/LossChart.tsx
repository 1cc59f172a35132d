"use client";
/**
 * Loss vs step, one line per variant (and per compared run). Draws at most
 * `budget` points per line, re-sampled from the full data for the visible
 * window (drag across a plot to zoom, double-click to reset); hover reads
 * the nearest real points by binary search over the full series.
 * The lines are drawn by LinePaths through recharts' scales (see there why);
 * the axes get round domains so live points rarely move them, and the step
 * axis has integer ticks only. When the lines' scales differ by more than
 * 10× the chart becomes small multiples (chart-loss lossLayout): one plot
 * per variant, each with its own y axis, sharing the step axis, the zoom and
 * the hover.
 */
import { memo, useId, useMemo, useReducer, useRef, useState, type MouseEvent } from "react";
import { CartesianGrid, LineChart, ReferenceArea, ReferenceDot, ReferenceLine, XAxis, YAxis } from "recharts";
import { extent, stableDomain } from "./model/chart-domain";
import { lossCsv } from "./model/chart-csv";
import { lossLayout, sampleLoss, type LossLine, type LossPanel, type SampledLine } from "../../server/core/charts/chart-loss";
import { valueAxisWidth } from "../../server/core/charts/chart-axis-layout";
import { integerTicks, niceTicks, tickText } from "../../server/core/charts/chart-svg";
import { NO_ZOOM, zoomReducer, type ZoomState } from "./model/chart-zoom";
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
  /** Another line metric than the loss (chart-loss.ts LINE_METRICS). */
  title?: string;
  testId?: string;
}

/** Height of each plot of small multiples. */
const MULTIPLE_HEIGHT = 140;

interface PlotProps {
  panel: LossPanel;
  lines: readonly SampledLine[];
  lineCount: number;
  xDomain: readonly [number, number];
  xTicks: number[];
  zoom: ZoomState;
  hits: readonly HoverHit[] | null;
  height: number;
  onPointer: (x: number | null) => void;
  onStart: (x: number) => void;
  onEnd: () => void;
  onLeave: () => void;
  onReset: () => void;
}

function LossPlot({ panel, lines, lineCount, xDomain, xTicks, zoom, hits, height, onPointer, onStart, onEnd, onLeave, onReset }: PlotProps) {
  const probe = useRef<PlotProbe>(EMPTY_PROBE);
  const bounds = useMemo(() => extent(lines), [lines]);
  const [yLo, yHi] = bounds ? stableDomain(bounds.y[0], bounds.y[1]) : [0, 1];
  const clipId = `loss-clip-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const drawn = lines.reduce((n, l) => n + l.data.length, 0);
  const ids = useMemo(() => new Set(panel.lines.map((l) => l.id)), [panel]);
  const own = hits?.filter((hit) => ids.has(hit.line.id)) ?? null;
  return (
    <div className="chart-loss-panel" data-testid="chart-loss-plot" data-panel={panel.key}>
      {panel.title !== null ? <div className="chart-loss-panel-title">{panel.title}</div> : null}
      <div
        className="chart-plot chart-plot-zoomable"
        data-drawn-points={drawn}
        onMouseDown={(event: MouseEvent<HTMLDivElement>) => {
          if (event.button !== 0) return;
          const x = pointerX(probe.current, event.clientX, event.currentTarget);
          if (x !== null) onStart(x);
        }}
        onMouseMove={(event: MouseEvent<HTMLDivElement>) => onPointer(pointerX(probe.current, event.clientX, event.currentTarget))}
        onMouseUp={onEnd}
        onMouseLeave={onLeave}
        onDoubleClick={onReset}
      >
        <LineChart responsive style={{ width: "100%", height }} margin={{ top: 8, right: 16, bottom: 16, left: 4 }}>
          <CartesianGrid stroke="var(--chart-grid)" strokeDasharray="3 3" />
          <XAxis
            type="number"
            dataKey="x"
            domain={[xDomain[0], xDomain[1]]}
            ticks={xTicks}
            allowDecimals={false}
            allowDataOverflow
            tickFormatter={tickText}
            label={{ value: "step", position: "insideBottom", offset: -10 }}
          />
          <YAxis type="number" width={valueAxisWidth(niceTicks(yLo, yHi).map(tickText))} domain={[yLo, yHi]} allowDataOverflow tickFormatter={tickText} label={{ value: "loss", angle: -90, position: "insideLeft", offset: 8 }} />
          <LinePaths lines={lines} clipId={clipId} lineCount={lineCount} />
          {zoom.drag ? <ReferenceArea x1={zoom.drag.from} x2={zoom.drag.to} fill="var(--chart-selection)" fillOpacity={0.12} ifOverflow="hidden" /> : null}
          {hits && hits[0] ? <ReferenceLine x={hits[0].point.step} stroke="var(--chart-cursor)" strokeDasharray="2 2" ifOverflow="hidden" /> : null}
          {own?.map(({ line, point }) =>
            point.value === null ? null : <ReferenceDot key={line.id} x={point.step} y={point.value} r={3} fill={line.color} stroke="var(--chart-dot-ring)" ifOverflow="hidden" />,
          )}
          <ScaleProbe probe={probe} />
        </LineChart>
      </div>
    </div>
  );
}

function LossChart({ lines, version, budget, height = 220, title = "Loss vs step", testId = "chart-loss" }: Props) {
  const [zoom, dispatch] = useReducer(zoomReducer, NO_ZOOM);
  const [hoverX, setHoverX] = useState<number | null>(null);
  const frame = useRef<number | null>(null);
  const latestX = useRef<number | null>(null);

  // The buffers behind `lines` grow in place: `version` says when they did.
  const sampled = useMemo(() => sampleLoss(lines, zoom.window, budget), [lines, version, zoom.window, budget]);
  const layout = useMemo(() => lossLayout(lines), [lines, version]);
  // Round domains: a live point inside them redraws the lines only. A zoomed x axis shows exactly the selection.
  const bounds = useMemo(() => extent(sampled.lines), [sampled]);
  const xLo = zoom.window ? zoom.window.x0 : bounds ? bounds.x[0] : 0;
  const xHi = zoom.window ? zoom.window.x1 : bounds ? stableDomain(bounds.x[0], bounds.x[1], 6)[1] : 1;
  const xTicks = useMemo(() => integerTicks(xLo, xHi, 6), [xLo, xHi]);
  const byPanel = useMemo(() => {
    const sampledById = new Map(sampled.lines.map((l) => [l.line.id, l]));
    return layout.panels.map((panel) => panel.lines.flatMap((line) => sampledById.get(line.id) ?? []));
  }, [layout, sampled]);
  const hits = useMemo<HoverHit[] | null>(() => {
    if (hoverX === null) return null;
    return lines.flatMap((line) => {
      const point = nearestPoint(line.series, hoverX);
      return point ? [{ line, point }] : [];
    });
  }, [lines, version, hoverX]);

  // Pointer moves are folded into one state update per animation frame.
  const onPointer = (x: number | null) => {
    latestX.current = x;
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      const latest = latestX.current;
      setHoverX(latest);
      if (latest !== null) dispatch({ type: "move", x: latest });
    });
  };
  const onLeave = () => {
    latestX.current = null;
    setHoverX(null);
    dispatch({ type: "cancel" });
  };

  const legend = useMemo(
    () => lines.map((l) => ({ key: l.id, label: l.label, color: l.color, dashed: l.dashed, faded: l.faded, dash: l.dash, marker: l.marker })),
    [lines],
  );
  const visible = zoom.window;
  const reset = visible ? (
    <button type="button" className="button button-small chart-button" data-testid="chart-zoom-reset" onClick={() => dispatch({ type: "reset" })}>
      reset zoom
    </button>
  ) : null;
  const drawnNote = budget !== null && sampled.drawnPoints < sampled.realPoints ? `; ${sampled.drawnPoints.toLocaleString("en-US")} drawn (min/max per bucket)` : "";
  const multiples = layout.panels.length > 1;

  return (
    <ChartCard
      testId={testId}
      title={title}
      points={sampled.realPoints}
      legend={legend}
      csv={() => lossCsv(lines, visible)}
      actions={reset}
      data={{ "data-layout": multiples ? "multiples" : "single" }}
      note={`${sampled.realPoints.toLocaleString("en-US")} real points${visible ? ` in steps ${tickText(visible.x0)}–${tickText(visible.x1)}` : ""}${drawnNote}. One line per variant, per rank where each rank logged it; each line has its own dash and markers.${layout.reason ? ` ${layout.reason}` : ""}`}
    >
      <div className={multiples ? "chart-loss-multiples" : undefined}>
        {layout.panels.map((panel, i) => (
          <LossPlot
            key={panel.key}
            panel={panel}
            lines={byPanel[i]!}
            lineCount={lines.length}
            xDomain={[xLo, xHi]}
            xTicks={xTicks}
            zoom={zoom}
            hits={hits}
            height={multiples ? MULTIPLE_HEIGHT : height}
            onPointer={onPointer}
            onStart={(x) => dispatch({ type: "start", x })}
            onEnd={() => dispatch({ type: "end" })}
            onLeave={onLeave}
            onReset={() => dispatch({ type: "reset" })}
          />
        ))}
      </div>
      <HoverReadout hits={hits} />
    </ChartCard>
  );
}

export default memo(LossChart);
