"use client";
/**
 * "Compare runs": the runs that logged metrics (of the same template when
 * this cell has one, else all), loaded when the picker opens; ticking a run
 * overlays its loss lines.
 */
import { memo, useState, type SyntheticEvent } from "react";
import type { ExecutionSummary } from "../../server/core/protocol/metrics-model";
import { compareChoices, runOption } from "../../server/core/charts/chart-compare";
import { fetchExecutions } from "./model/chart-fetch";

type ListState = { state: "idle" } | { state: "loading" } | { state: "loaded"; runs: ExecutionSummary[] } | { state: "failed"; error: string };

interface Props {
  templateId: string | null;
  primaryId: string;
  selected: readonly string[];
  onChange: (executionIds: string[]) => void;
  /** Runs whose metrics could not be loaded, with why. */
  errors: ReadonlyMap<string, string>;
}

function ComparePicker({ templateId, primaryId, selected, onChange, errors }: Props) {
  const [list, setList] = useState<ListState>({ state: "idle" });

  const load = async () => {
    setList({ state: "loading" });
    const result = await fetchExecutions(templateId);
    setList(result.ok ? { state: "loaded", runs: compareChoices(result.data, primaryId) } : { state: "failed", error: result.error });
  };
  const toggleOpen = (event: SyntheticEvent<HTMLDetailsElement>) => {
    if (event.currentTarget.open) void load();
  };
  const toggleRun = (executionId: string, on: boolean) => {
    onChange(on ? [...selected, executionId] : selected.filter((id) => id !== executionId));
  };

  return (
    <details className="compare-runs" data-testid="compare-runs" onToggle={toggleOpen}>
      <summary>Compare runs{selected.length > 0 ? ` (${selected.length})` : ""}</summary>
      <p className="chart-note">{templateId ? "Runs of this experiment template" : "All runs that logged metrics"}; a ticked run&apos;s loss lines are dashed.</p>
      {list.state === "loading" ? <p className="chart-none">Loading runs…</p> : null}
      {list.state === "failed" ? <p className="chart-error">Could not list runs: {list.error}</p> : null}
      {list.state === "loaded" && list.runs.length === 0 ? <p className="chart-none">No other run to compare with.</p> : null}
      {list.state === "loaded" && list.runs.length > 0 ? (
        <ul className="compare-run-list">
          {list.runs.map((run) => (
            <li key={run.executionId}>
              <label className="compare-run" data-testid="compare-run" data-execution-id={run.executionId}>
                <input type="checkbox" checked={selected.includes(run.executionId)} onChange={(e) => toggleRun(run.executionId, e.target.checked)} />
                <span>
                  {run.notebookTitle ? `${run.notebookTitle} · ` : ""}
                  {runOption(run)}
                </span>
              </label>
              {errors.has(run.executionId) ? <span className="chart-error"> could not load: {errors.get(run.executionId)}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </details>
  );
}

export default memo(ComparePicker);
