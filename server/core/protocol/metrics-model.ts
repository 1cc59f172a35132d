/**
 * Metric series as the charts read them: stored per cell execution, tagged
 * by the experiment variant that logged them (the metric message's runId,
 * e.g. "DataParallel x4"; "" when untagged) and by rank or device index.
 * Pure types and the two HTTP paths, shared by server and browser.
 */
import type { DevicePlan } from "./kernel-messages";
import type { ParameterValue } from "./notebook-model";

export interface MetricSeriesKey {
  /** Variant tag; "" when the code did not tag its metrics. */
  tag: string;
  /** Metric name, unit in the suffix (`step_ms`, `memory_mib`; see kernels/mgpulab/metrics.py). */
  name: string;
  /** DDP rank, or device index for DataParallel per-device values. */
  rank: number;
}

/** Columnar so a million points stay two compact arrays. `values[i]` is null for a non-finite value. */
export interface MetricSeriesData extends MetricSeriesKey {
  steps: number[];
  values: Array<number | null>;
}

/** One cell execution as a chartable, comparable run. */
export interface ExecutionSummary {
  executionId: string;
  notebookId: string;
  notebookTitle: string;
  cellId: string;
  executionCount: number | null;
  /** "queued" | "running" | "ok" | "error" | "interrupted" | "aborted" | "kernel-died" | "no-kernel" */
  status: string;
  /** ISO 8601 */
  startedAt: string | null;
  /** The kernel run's honest device description ("2× cpu (no CUDA)"). */
  deviceMode: string;
  /** What each variant (metric tag; "" untagged) ran on, as the toolkit planned it; empty before any plan arrived. */
  devicePlans: Record<string, DevicePlan>;
  /** The template and parameter values the cell had when it ran, when it was a templated cell. */
  templateId: string | null;
  parameters: Record<string, ParameterValue> | null;
  pointCount: number;
}

export interface ExecutionMetrics {
  execution: ExecutionSummary;
  series: MetricSeriesData[];
}

/** A metric message as it streams to viewers (live chart updates). */
export interface MetricPointMessage {
  tag: string;
  rank: number;
  step: number;
  values: Record<string, number | null>;
}

/** GET: ExecutionMetrics of one execution. */
export const executionMetricsPath = (executionId: string): string => `/api/executions/${encodeURIComponent(executionId)}/metrics`;
/** GET: ExecutionSummary[] of executions that logged metrics, newest first (`?templateId=` narrows). */
export const EXECUTIONS_PATH = "/api/executions";
/** MIME type of a scenario's verdict report (display output of the verdicts cell). */
export const VERDICTS_MIME = "application/vnd.mgpulab.verdicts+json";
