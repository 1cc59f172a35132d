/**
 * How runs read when compared: a picker option names the run (execution
 * count, time, status, device mode, parameters); a line's legend names its
 * run by the parameters that differ from this cell's run (all of them when
 * none differ) and by its device mode.
 */
import type { ExecutionSummary } from "../protocol/metrics-model";
import type { ParameterValue } from "../protocol/notebook-model";

export function formatParameters(parameters: Record<string, ParameterValue> | null, only?: ReadonlySet<string>): string {
  if (!parameters) return "";
  return Object.keys(parameters)
    .filter((name) => !only || only.has(name))
    .map((name) => `${name}=${String(parameters[name])}`)
    .join(", ");
}

/** Parameter names whose values differ between the two runs (present in either). */
export function differingParameters(run: ExecutionSummary, primary: ExecutionSummary | null): Set<string> {
  const a = run.parameters ?? {};
  const b = primary?.parameters ?? {};
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return new Set([...names].filter((name) => a[name] !== b[name] && name in a));
}

/** "this run" or "run [7]". */
export function runName(run: ExecutionSummary | null, isPrimary: boolean): string {
  if (isPrimary) return "this run";
  return run?.executionCount !== null && run?.executionCount !== undefined ? `run [${run.executionCount}]` : "run";
}

/** The run part of a compared line's legend: name, differing (or all) parameters, device mode. */
export function runLegend(run: ExecutionSummary | null, primary: ExecutionSummary | null, isPrimary: boolean): string {
  const name = runName(run, isPrimary);
  if (!run) return name;
  const differing = isPrimary ? new Set<string>() : differingParameters(run, primary);
  const parameters = formatParameters(run.parameters, differing.size > 0 ? differing : undefined);
  return [name + (parameters ? `: ${parameters}` : ""), run.deviceMode].filter((part) => part !== "").join(" · ");
}

/** One picker option's text. */
export function runOption(run: ExecutionSummary): string {
  const when = run.startedAt ? formatWhen(run.startedAt) : "not started";
  const parameters = formatParameters(run.parameters);
  return [runName(run, false), when, run.status, run.deviceMode, parameters, `${run.pointCount.toLocaleString("en-US")} points`]
    .filter((part) => part !== "")
    .join(" · ");
}

/** Runs the picker offers: every listed run but this cell's own. */
export function compareChoices(runs: readonly ExecutionSummary[], primaryId: string | null): ExecutionSummary[] {
  return runs.filter((run) => run.executionId !== primaryId);
}

function formatWhen(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString("en-GB", { day: "2-digit", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}
