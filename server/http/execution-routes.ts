/**
 * Chart data over HTTP (a million points is no socket message): one
 * execution's metric series, and the executions that logged metrics, for
 * run comparison.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PrismaClient } from "../persistence";
import { MetricRepository } from "../persistence";
import { parseDevicePlans } from "../persistence/run-repository";
import { EXECUTIONS_PATH, type ExecutionMetrics, type ExecutionSummary } from "../core/protocol/metrics-model";
import type { ParameterValue } from "../core/protocol/notebook-model";
import { renderExecutionChartsSvg } from "../charts/static-chart";
import { replyError, sendError, sendJson } from "./json-reply";

const METRICS_PATH = /^\/api\/executions\/([A-Za-z0-9_-]{1,64})\/metrics$/;
const TEMPLATE_ID = /^[A-Za-z0-9_/-]{1,200}$/;

export interface ExecutionRoutesOptions {
  prisma: PrismaClient;
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
  const reply = metricsMatch ? executionMetrics(options.prisma, metricsMatch[1]!) : executionList(options.prisma, url.searchParams.get("templateId"), options.readable);
  void reply.then(
    (body) => (body === null ? sendError(res, "not-found", `no execution ${metricsMatch?.[1] ?? ""}`) : sendJson(res, 200, body)),
    (error: unknown) => replyError(res, error, options.onError, "read metrics"),
  );
  return true;
}

/** The static image of an execution's charts (for the .ipynb export), or null when it logged no metrics. */
export async function executionChartSvg(prisma: PrismaClient, executionId: string): Promise<string | null> {
  const metrics = await executionMetrics(prisma, executionId);
  return metrics && metrics.series.length > 0 ? renderExecutionChartsSvg(metrics) : null;
}

export async function executionMetrics(prisma: PrismaClient, executionId: string): Promise<ExecutionMetrics | null> {
  const [execution] = await executionSummaries(prisma, [executionId]);
  if (!execution) return null;
  return { execution, series: await new MetricRepository(prisma).executionSeries(executionId) };
}

async function executionList(prisma: PrismaClient, templateId: string | null, readable: ExecutionRoutesOptions["readable"]): Promise<ExecutionSummary[]> {
  if (templateId !== null && !TEMPLATE_ID.test(templateId)) return [];
  const ids = await new MetricRepository(prisma).executionsWithMetrics({ templateId: templateId ?? undefined });
  const summaries = await executionSummaries(prisma, ids);
  const allowed = await readable([...new Set(summaries.map((summary) => summary.notebookId))]);
  return summaries.filter((summary) => allowed.has(summary.notebookId));
}

/** Summaries in the order of `ids`, skipping unknown ids and executions of deleted notebooks. */
export async function executionSummaries(prisma: PrismaClient, ids: readonly string[]): Promise<ExecutionSummary[]> {
  const rows = await prisma.cellExecution.findMany({
    where: { id: { in: [...ids] }, run: { notebook: { deletedAt: null } } },
    select: {
      id: true,
      cellId: true,
      executionCount: true,
      status: true,
      startedAt: true,
      templateId: true,
      parameters: true,
      devicePlans: true,
      run: { select: { deviceMode: true, notebook: { select: { id: true, title: true } } } },
    },
  });
  const counts = await new MetricRepository(prisma).executionPointCounts(rows.map((row) => row.id));
  const byId = new Map(
    rows.map((row) => [
      row.id,
      {
        executionId: row.id,
        notebookId: row.run.notebook.id,
        notebookTitle: row.run.notebook.title,
        cellId: row.cellId,
        executionCount: row.executionCount,
        status: row.status,
        startedAt: row.startedAt?.toISOString() ?? null,
        deviceMode: row.run.deviceMode,
        devicePlans: parseDevicePlans(row.devicePlans),
        templateId: row.templateId,
        parameters: scalarRecord(row.parameters),
        pointCount: counts.get(row.id) ?? 0,
      } satisfies ExecutionSummary,
    ]),
  );
  return ids.flatMap((id) => byId.get(id) ?? []);
}

function scalarRecord(value: unknown): Record<string, ParameterValue> | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const entries = Object.entries(value).filter((entry): entry is [string, ParameterValue] => ["string", "number", "boolean"].includes(typeof entry[1]));
  return Object.fromEntries(entries);
}
