"use client";
/**
 * The compact panel under a cell: device notice, loss, step time, samples,
 * memory, speed-up, stragglers. Loss lines follow every (frame-throttled)
 * version; the run-wide aggregates follow a slower clock while data streams.
 */
import { memo, useMemo, type ReactNode } from "react";
import { DEFAULT_BUDGET, LINE_METRICS, lossLines } from "../../server/core/charts/chart-loss";
import { panelAggregates } from "../../server/core/charts/chart-panel";
import { WARMUP_RULE } from "../../server/core/charts/chart-stats";
import type { MetricStore } from "../../server/core/charts/metric-store";
import DeviceBarsChart from "./DeviceBarsChart";
import LossChart from "./LossChart";
import SpeedupChart from "./SpeedupChart";
import StragglerList from "./StragglerList";
import TimingChart from "./TimingChart";
import { useTrailingVersion } from "./use-trailing-version";

import "./charts.css";

/** Bar charts, speed-up and stragglers redraw at most this often while a run streams. */
export const AGGREGATE_INTERVAL_MS = 1_000;

interface Props {
  store: MetricStore;
  /** The store version to render (frame-throttled). */
  version: number;
  primaryId: string;
  compared: readonly string[];
  /** Loss points drawn per line; null draws all (benchmark only). */
  budget?: number | null;
  /** The compare-runs picker, when the panel has one. */
  picker?: ReactNode;
  /** What the cell is called (its heading or prompt): the name of its untagged run. */
  cellName?: string | null;
}

function ChartPanel({ store, version, primaryId, compared, budget = DEFAULT_BUDGET, picker, cellName = null }: Props) {
  const slowVersion = useTrailingVersion(version, AGGREGATE_INTERVAL_MS);
  // The store mutates in place: the versions are what change when its data did.
  const lines = useMemo(() => lossLines(store, primaryId, compared, cellName), [store, version, primaryId, compared, cellName]);
  // Other per-step lines (a parameter norm): a chart each, beside the loss.
  const otherLines = useMemo(
    () => LINE_METRICS.filter((m) => m.metric !== "loss").map((m) => ({ ...m, lines: lossLines(store, primaryId, compared, cellName, m.metric) })).filter((m) => m.lines.length > 0),
    [store, version, primaryId, compared, cellName],
  );
  const aggregates = useMemo(() => panelAggregates(store, primaryId, cellName), [store, slowVersion, primaryId, cellName]);
  const run = store.run(primaryId);
  if (!run || run.series.length === 0) return null;
  return (
    <div className="cell-charts" data-testid="cell-charts" data-execution-id={primaryId}>
      {aggregates?.device ? (
        <div className={aggregates.device.emulated ? "chart-device chart-device-emulated" : "chart-device"} data-testid="chart-device-mode">
          <p>{aggregates.device.text}</p>
          {aggregates.device.variants.length > 0 ? (
            <ul className="chart-device-plans">
              {aggregates.device.variants.map((variant) => (
                <li key={variant.tag} data-testid="chart-device-plan" data-tag={variant.tag}>
                  <strong>{variant.tag === "" ? (cellName ?? "this cell's run") : variant.tag}: </strong>
                  {variant.label}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      <div className="chart-grid">
        {lines.length > 0 ? <LossChart lines={lines} version={version} budget={budget} /> : null}
        {otherLines.map((m) => (
          <LossChart key={m.metric} lines={m.lines} version={version} budget={budget} title={m.title} testId={m.testId} />
        ))}
        {aggregates?.timing ? <TimingChart chart={aggregates.timing} /> : null}
        {aggregates?.samples ? (
          <DeviceBarsChart testId="chart-samples" title="Samples per device per step" unit="samples" chart={aggregates.samples} note={`Samples per step; ${WARMUP_RULE}.`} />
        ) : null}
        {aggregates?.memory.map((memory) => (
          <DeviceBarsChart
            key={memory.source ?? ""}
            testId="chart-memory"
            title={memory.title}
            unit={memory.scale.unit}
            chart={memory.chart}
            note={memory.note}
            source={memory.source}
          />
        ))}
        {aggregates?.utilization ? (
          <DeviceBarsChart
            testId="chart-utilization"
            title="GPU utilisation (%)"
            unit="%"
            chart={aggregates.utilization}
            note={`NVML utilization.gpu per GPU (any process): the share of each sample period in which a kernel ran, mean over the run; ${WARMUP_RULE}.`}
          />
        ) : null}
        {aggregates?.speedup ? <SpeedupChart chart={aggregates.speedup} /> : null}
      </div>
      {aggregates?.stragglers ? <StragglerList flagged={aggregates.stragglers} /> : null}
      {picker}
    </div>
  );
}

export default memo(ChartPanel);
