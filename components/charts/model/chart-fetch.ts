/**
 * The two HTTP reads the charts make, with answers checked by a schema
 * before anything uses them (the server half is written separately).
 */
import { z } from "zod";
import { devicePlanSchema } from "../../../server/core/protocol/kernel-messages";
import { EXECUTIONS_PATH, executionMetricsPath, type ExecutionMetrics, type ExecutionSummary } from "../../../server/core/protocol/metrics-model";

export type FetchResult<T> = { ok: true; data: T } | { ok: false; status: number | null; error: string };

// The columns can hold a million numbers: one plain loop each, not a schema per element.
const numberColumn = z.custom<number[]>((v) => Array.isArray(v) && v.every((n) => typeof n === "number"), "expected an array of numbers");
const valueColumn = z.custom<Array<number | null>>(
  (v) => Array.isArray(v) && v.every((n) => n === null || typeof n === "number"),
  "expected an array of numbers or nulls",
);

const parameterValue = z.union([z.string(), z.number(), z.boolean()]);

const executionSummary = z.object({
  executionId: z.string(),
  notebookId: z.string(),
  notebookTitle: z.string(),
  cellId: z.string(),
  executionCount: z.number().nullable(),
  status: z.string(),
  startedAt: z.string().nullable(),
  deviceMode: z.string(),
  devicePlans: z.record(z.string(), devicePlanSchema),
  templateId: z.string().nullable(),
  parameters: z.record(z.string(), parameterValue).nullable(),
  pointCount: z.number(),
});

const executionMetrics = z.object({
  execution: executionSummary,
  series: z.array(
    z.object({
      tag: z.string(),
      name: z.string(),
      rank: z.number(),
      steps: numberColumn,
      values: valueColumn,
    }),
  ),
});

export function fetchExecutionMetrics(executionId: string, fetchImpl: typeof fetch = fetch): Promise<FetchResult<ExecutionMetrics>> {
  return getJson(executionMetricsPath(executionId), executionMetrics, fetchImpl);
}

export function fetchExecutions(templateId: string | null, fetchImpl: typeof fetch = fetch): Promise<FetchResult<ExecutionSummary[]>> {
  const url = templateId === null ? EXECUTIONS_PATH : `${EXECUTIONS_PATH}?templateId=${encodeURIComponent(templateId)}`;
  return getJson(url, z.array(executionSummary), fetchImpl);
}

async function getJson<T>(url: string, schema: z.ZodType<T>, fetchImpl: typeof fetch): Promise<FetchResult<T>> {
  let response: Response;
  try {
    response = await fetchImpl(url, { headers: { Accept: "application/json" } });
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, status: null, error: `could not reach the server (${err.message})` };
    throw err;
  }
  if (!response.ok) return { ok: false, status: response.status, error: `the server answered ${response.status} ${response.statusText}`.trim() };
  let body: unknown;
  try {
    body = await response.json();
  } catch (err) {
    if (err instanceof SyntaxError) return { ok: false, status: response.status, error: "the server's answer was not JSON" };
    throw err;
  }
  const parsed = schema.safeParse(body);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, status: response.status, error: "the server's answer had an unexpected shape" };
}
