"use client";
/**
 * The charts of a cell's execution: stored metrics fetched for
 * `executionId` (again when it changes, and when its run ends), live points
 * from `feed` appended while it runs, rendered at most once per animation
 * frame. Renders nothing until the execution has a metric series.
 */
import { memo, useCallback, useEffect, useMemo, useState } from "react";
import type { MetricFeed } from "../../server/core/charts/metric-store";
import { MetricStore } from "../../server/core/charts/metric-store";
import { FrameThrottledVersion } from "./model/chart-frame";
import ChartPanel from "./ChartPanel";
import ComparePicker from "./ComparePicker";
import { useFrameVersion } from "./use-frame-version";
import { useMetricSync } from "./use-metric-sync";

export interface CellChartsProps {
  executionId: string | null;
  running: boolean;
  feed: MetricFeed;
  /** The cell's experiment template: the compare picker lists runs of it (all runs when null). */
  templateId: string | null;
  /** What the user calls the cell (its heading or prompt): names its untagged run. */
  cellName?: string | null;
}

const NO_ERRORS: ReadonlyMap<string, string> = new Map();

function CellCharts({ executionId, running, feed, templateId, cellName = null }: CellChartsProps) {
  const [store] = useState(() => new MetricStore());
  const [frames] = useState(() => new FrameThrottledVersion(store));
  const version = useFrameVersion(frames);
  const sync = useMetricSync(store, feed, executionId, running);
  const [compared, setCompared] = useState<string[]>([]);
  const [compareErrors, setCompareErrors] = useState<ReadonlyMap<string, string>>(NO_ERRORS);

  // This cell's own run is never one of its compared runs.
  const shownCompared = useMemo(() => compared.filter((id) => id !== executionId), [compared, executionId]);
  useEffect(() => {
    if (!sync) return;
    let current = true;
    void sync.compare(shownCompared).then((errors) => {
      if (current) setCompareErrors(errors.size > 0 ? errors : NO_ERRORS);
    });
    return () => {
      current = false;
    };
  }, [sync, shownCompared]);

  const onCompare = useCallback((ids: string[]) => setCompared(ids), []);
  // Memoised so that a parent re-render (typing in the cell) does not redraw the charts.
  const picker = useMemo(
    () =>
      executionId === null ? null : (
        <ComparePicker templateId={templateId} primaryId={executionId} selected={shownCompared} onChange={onCompare} errors={compareErrors} />
      ),
    [templateId, executionId, shownCompared, onCompare, compareErrors],
  );
  if (executionId === null) return null;
  return <ChartPanel store={store} version={version} primaryId={executionId} compared={shownCompared} picker={picker} cellName={cellName} />;
}

export default memo(CellCharts);
