/**
 * Chart data over HTTP (a million points is no socket message): one
 * execution's metric series, and the executions that logged metrics, for
 * run comparison.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MetricRepository } from "../persistence";
import { EXECUTIONS_PATH, type ExecutionMetrics, type ExecutionSummary } from "../core/protocol/metrics-model";
import { renderExecutionChartsSvg } from "../core/charts/static/static-chart";
import { replyError, sendError, sendJson } from "./json-reply";

const METRICS_PATH = /^\/api\/executions\/([A-Za-z0-9_-]{1,64})\/metrics$/;
const TEMPLATE_ID = /^[A-Za-z0-9_/-]{1,200}$/;

export interface ExecutionRoutesOptions {
  metrics: MetricRepository;
  onError: (error: unknown) => void;
  /** Of these notebooks, the ones the asker may read (the access gate): the list shows only their executions. */
  readable: (notebookIds: readonly string[]) => Promise<ReadonlySet<string>>;
}

/** Returns false when the request is not for these routes. */
export function handleExecutionRoutes(req: IncomingMessage, res: ServerResponse, options: ExecutionRoutesOptions): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  const metricsMatch = METRICS_PATH.exec(url.pathname);
  if (url.pathname !== EXECUTIONS_PATH && !metricsMatch) return false;
  if (req.method !== "GET") return sendError(res, "invalid", "use GET", 405);
  const reply = metricsMatch ? executionMetrics(options.metrics, metricsMatch[1]!) : executionList(options.metrics, url.searchParams.get("templateId"), options.readable);
  void reply.then(
    (body) => (body === null ? sendError(res, "not-found", `no execution ${metricsMatch?.[1] ?? ""}`) : sendJson(res, 200, body)),
    (error: unknown) => replyError(res, error, options.onError, "read metrics"),
  );
  return true;
}

/** The static image of an execution's charts (for the .ipynb export), or null when it logged no metrics. */
export async function executionChartSvg(repository: MetricRepository, executionId: string): Promise<string | null> {
  const metrics = await executionMetrics(repository, executionId);
  return metrics && metrics.series.length > 0 ? renderExecutionChartsSvg(metrics) : null;
}

export async function executionMetrics(metrics: MetricRepository, executionId: string): Promise<ExecutionMetrics | null> {
  const [execution] = await metrics.executionSummaries([executionId]);
  if (!execution) return null;
  return { execution, series: await metrics.executionSeries(executionId) };
}

async function executionList(metrics: MetricRepository, templateId: string | null, readable: ExecutionRoutesOptions["readable"]): Promise<ExecutionSummary[]> {
  if (templateId !== null && !TEMPLATE_ID.test(templateId)) return [];
  const ids = await metrics.executionsWithMetrics({ templateId: templateId ?? undefined });
  const summaries = await metrics.executionSummaries(ids);
  const allowed = await readable([...new Set(summaries.map((summary) => summary.notebookId))]);
  return summaries.filter((summary) => allowed.has(summary.notebookId));
}
