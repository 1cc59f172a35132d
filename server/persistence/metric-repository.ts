/**
 * Metric points: millions per run. Writes are batched (the runtime collects
 * the kernel's metric messages for a moment and appends them in one
 * transaction); each message takes one number of the notebook's sequence,
 * shared with outputs, so a reconnecting chart asks for "after seq N".
 *
 * Storage: a series row per (run, tag, name, rank) and a compact point row
 * (seriesId, seq, step, value) per value, inserted with multi-row INSERTs.
 */
import { Prisma, type PrismaClient } from "./generated/client";
import { sqlOf } from "./database";
import { InvalidDataError, NotFoundError } from "./errors";
import { claimSeqs, integer, textOrNull, type MetricAppender } from "./run-writes";
import { rowChunks, valuesList, type Sql, type SqlQueries } from "./sql";
import { MAX_ID_CHARS, MAX_METRIC_STEP, MAX_METRIC_TAG_CHARS as MAX_TAG_CHARS, METRIC_NAME_PATTERN as NAME_PATTERN } from "../core/limits";
import type { MetricSeriesData as ChartSeries, ExecutionSummary } from "../core/protocol/metrics-model";
import type { ParameterValue } from "../core/protocol/notebook-model";
import { parseDevicePlans } from "./run-rows";
import type { MetricInput, MetricSeriesData, SequencedMetric } from "./types";

/** Points per INSERT statement at most (4 parameters each; SQLite allows 32,766, PostgreSQL 65,535). */
const POINTS_PER_STATEMENT = 1_024;
const DEFAULT_SINCE_LIMIT = 100_000;
const CACHED_RUNS = 64;

export interface SeriesInfo {
  tag: string;
  name: string;
  rank: number;
  points: number;
}

export interface SeriesFilter {
  name?: string;
  tag?: string;
  rank?: number;
}

export class MetricRepository implements MetricAppender {
  /** runId → (series key → series id), filled after commits only. */
  private readonly seriesIds = new Map<string, Map<string, number>>();
  private readonly sql: Sql;

  constructor(private readonly prisma: PrismaClient) {
    this.sql = sqlOf(prisma);
  }

  /**
   * Appends metric messages (in order) to a run. Non-finite values are stored
   * as null. Returns the sequence numbers given to the first and last message.
   */
  async append(runId: string, messages: readonly MetricInput[]): Promise<{ firstSeq: number; lastSeq: number } | null> {
    if (messages.length === 0) return null;
    messages.forEach(checkMessage);
    const created = new Map<string, number>();
    const result = await this.sql.transaction(async (tx) => {
      const [run] = await tx.all(`SELECT "notebookId" FROM "KernelRun" WHERE "id" = ?`, [runId]);
      const notebookId = run ? textOrNull(run, "notebookId") : null;
      if (notebookId === null) throw new NotFoundError("run", runId);
      return this.appendIn(tx, runId, notebookId, messages, created);
    });
    this.remember(runId, created);
    return result;
  }

  /**
   * `append` inside the caller's transaction (the runtime stores a kernel's
   * outputs, metrics and how far it has read together). Call `remember` with
   * `created` once the transaction has committed.
   */
  async appendIn(tx: SqlQueries, runId: string, notebookId: string, messages: readonly MetricInput[], created: Map<string, number>): Promise<{ firstSeq: number; lastSeq: number } | null> {
    messages.forEach(checkMessage);
    if (messages.length === 0) return null;
    const ids = await this.resolveSeries(tx, runId, messages, created);
    const lastSeq = await claimSeqs(tx, notebookId, messages.length);
    const firstSeq = lastSeq - messages.length + 1;
    const rows: Array<[number, number, number, number | null]> = [];
    messages.forEach((message, index) => {
      const tag = message.tag ?? "";
      const executionId = message.executionId ?? "";
      for (const [name, value] of Object.entries(message.values)) {
        rows.push([ids.get(seriesKey(executionId, tag, name, message.rank))!, firstSeq + index, message.step, finiteOrNull(value)]);
      }
    });
    let at = 0;
    for (const size of rowChunks(rows.length, POINTS_PER_STATEMENT)) {
      await tx.run(`INSERT INTO "MetricPoint" ("seriesId", "seq", "step", "value") VALUES ${valuesList(size, 4)}`, rows.slice(at, at + size).flat());
      at += size;
    }
    return { firstSeq, lastSeq };
  }

  /** Series created by a committed transaction are cached (never before: a rolled-back id must not be reused). */
  remember(runId: string, created: Map<string, number>): void {
    if (created.size === 0) return;
    const cache = this.cacheFor(runId, true);
    for (const [key, id] of created) cache.set(key, id);
  }

  /** The run's series, with their point counts. */
  async listSeries(runId: string): Promise<SeriesInfo[]> {
    const rows = await this.prisma.metricSeries.findMany({
      where: { runId },
      orderBy: [{ tag: "asc" }, { name: "asc" }, { rank: "asc" }],
      select: { tag: true, name: true, rank: true, _count: { select: { points: true } } },
    });
    return rows.map(({ _count, ...row }) => ({ ...row, points: _count.points }));
  }

  /** The points of the run's series matching `filter`, columnar, each series in sequence order. */
  async series(runId: string, filter: SeriesFilter = {}): Promise<MetricSeriesData[]> {
    const series = await this.prisma.metricSeries.findMany({
      where: { runId, name: filter.name, tag: filter.tag, rank: filter.rank },
      orderBy: [{ tag: "asc" }, { name: "asc" }, { rank: "asc" }],
      select: { id: true, tag: true, name: true, rank: true },
    });
    const result: MetricSeriesData[] = [];
    for (const { id, ...info } of series) {
      const points = await this.prisma.metricPoint.findMany({ where: { seriesId: id }, orderBy: { seq: "asc" }, select: { seq: true, step: true, value: true } });
      const data: MetricSeriesData = { ...info, seq: new Array<number>(points.length), step: new Array<number>(points.length), value: new Array<number | null>(points.length) };
      points.forEach((point, index) => {
        data.seq[index] = point.seq;
        data.step[index] = point.step;
        data.value[index] = point.value;
      });
      result.push(data);
    }
    return result;
  }

  /**
   * The run's metric messages after `afterSeq`, rebuilt as the kernel sent
   * them, in order. At most about `limit` points; a message is never cut in
   * two, so continuing from the last seq returned misses nothing.
   */
  async since(runId: string, afterSeq: number, limit = DEFAULT_SINCE_LIMIT): Promise<SequencedMetric[]> {
    const points = await this.prisma.metricPoint.findMany({
      where: { series: { runId }, seq: { gt: afterSeq } },
      orderBy: [{ seq: "asc" }],
      take: limit,
      select: { seq: true, step: true, value: true, series: { select: { executionId: true, tag: true, name: true, rank: true } } },
    });
    const messages: SequencedMetric[] = [];
    for (const point of points) {
      let message = messages[messages.length - 1];
      if (!message || message.seq !== point.seq) {
        message = { seq: point.seq, executionId: point.series.executionId, tag: point.series.tag, rank: point.series.rank, step: point.step, values: {} };
        messages.push(message);
      }
      message.values[point.series.name] = point.value;
    }
    if (points.length === limit && messages.length > 1) messages.pop();
    return messages;
  }

  /**
   * Every series one cell execution logged, columnar, for the charts. Read
   * with one raw query: a million points through the ORM's row objects
   * would cost seconds.
   */
  async executionSeries(executionId: string): Promise<ChartSeries[]> {
    const series = await this.prisma.metricSeries.findMany({
      where: { executionId },
      orderBy: [{ tag: "asc" }, { name: "asc" }, { rank: "asc" }],
      select: { id: true, tag: true, name: true, rank: true },
    });
    if (series.length === 0) return [];
    const byId = new Map(series.map((s) => [s.id, { tag: s.tag, name: s.name, rank: s.rank, steps: [] as number[], values: [] as Array<number | null> }]));
    // A subquery, not a list of ids: an execution may log more series than SQLite takes bound parameters.
    const rows = await this.prisma.$queryRaw<Array<{ seriesId: number | bigint; step: number | bigint; value: number | null }>>`
      SELECT "seriesId", "step", "value" FROM "MetricPoint"
      WHERE "seriesId" IN (SELECT "id" FROM "MetricSeries" WHERE "executionId" = ${executionId}) ORDER BY "seriesId", "seq"`;
    for (const row of rows) {
      const target = byId.get(Number(row.seriesId))!;
      target.steps.push(Number(row.step));
      target.values.push(row.value === null ? null : Number(row.value));
    }
    return [...byId.values()];
  }

  /** Points logged per execution, for executions that logged any (newest first). */
  async executionPointCounts(executionIds: readonly string[]): Promise<Map<string, number>> {
    if (executionIds.length === 0) return new Map();
    const rows = await this.prisma.$queryRaw<Array<{ executionId: string; points: number | bigint }>>`
      SELECT s."executionId" AS "executionId", COUNT(*) AS "points" FROM "MetricPoint" p JOIN "MetricSeries" s ON s."id" = p."seriesId"
      WHERE s."executionId" IN (${Prisma.join([...executionIds])}) GROUP BY s."executionId"`;
    return new Map(rows.map((row) => [row.executionId, Number(row.points)]));
  }

  /** Ids of the most recent executions that logged metrics, optionally only those of one template. */
  async executionsWithMetrics(options: { templateId?: string; limit?: number } = {}): Promise<string[]> {
    const limit = Math.min(Math.max(options.limit ?? 100, 1), 500);
    const rows = await this.prisma.$queryRaw<Array<{ id: string }>>`
      SELECT e."id" AS "id" FROM "CellExecution" e
      WHERE EXISTS (SELECT 1 FROM "MetricSeries" s WHERE s."executionId" = e."id")
      ${options.templateId !== undefined ? Prisma.sql`AND e."templateId" = ${options.templateId}` : Prisma.empty}
      ORDER BY e."queuedAt" DESC LIMIT ${limit}`;
    return rows.map((row) => row.id);
  }

  /** Summaries in the order of `ids` (run comparison), skipping unknown ids and executions of deleted notebooks. */
  async executionSummaries(ids: readonly string[]): Promise<ExecutionSummary[]> {
    const rows = await this.prisma.cellExecution.findMany({
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
    const counts = await this.executionPointCounts(rows.map((row) => row.id));
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

  /** Series ids for every (tag, name, rank) in `messages`, creating the missing ones. */
  private async resolveSeries(tx: SqlQueries, runId: string, messages: readonly MetricInput[], created: Map<string, number>): Promise<Map<string, number>> {
    const known = new Map(this.cacheFor(runId, false));
    const wanted = new Map<string, { executionId: string; tag: string; name: string; rank: number }>();
    for (const message of messages) {
      const tag = message.tag ?? "";
      const executionId = message.executionId ?? "";
      for (const name of Object.keys(message.values)) {
        const key = seriesKey(executionId, tag, name, message.rank);
        if (!known.has(key)) wanted.set(key, { executionId, tag, name, rank: message.rank });
      }
    }
    if (wanted.size === 0) return known;
    const load = async () => {
      for (const row of await tx.all(`SELECT "id", "executionId", "tag", "name", "rank" FROM "MetricSeries" WHERE "runId" = ?`, [runId])) {
        const key = seriesKey(textOrNull(row, "executionId") ?? "", textOrNull(row, "tag") ?? "", textOrNull(row, "name") ?? "", integer(row, "rank"));
        if (!known.has(key)) {
          const id = integer(row, "id");
          known.set(key, id);
          created.set(key, id);
        }
        wanted.delete(key);
      }
    };
    await load();
    if (wanted.size > 0) {
      const series = [...wanted.values()];
      let at = 0;
      for (const size of rowChunks(series.length, 256)) {
        const params = series.slice(at, at + size).flatMap((each) => [runId, each.executionId, each.tag, each.name, each.rank]);
        await tx.run(`INSERT INTO "MetricSeries" ("runId", "executionId", "tag", "name", "rank") VALUES ${valuesList(size, 5)}`, params);
        at += size;
      }
      await load();
    }
    return known;
  }

  private cacheFor(runId: string, create: boolean): Map<string, number> {
    let cache = this.seriesIds.get(runId);
    if (!cache) {
      cache = new Map();
      if (!create) return cache;
      if (this.seriesIds.size >= CACHED_RUNS) this.seriesIds.delete(this.seriesIds.keys().next().value!);
      this.seriesIds.set(runId, cache);
    }
    return cache;
  }
}

function seriesKey(executionId: string, tag: string, name: string, rank: number): string {
  return `${executionId}\u0000${tag}\u0000${name}\u0000${rank}`;
}

function finiteOrNull(value: number | null): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function checkMessage(message: MetricInput, index: number): void {
  const where = `metric message ${index}`;
  if (!Number.isSafeInteger(message.rank) || message.rank < 0) throw new InvalidDataError(`${where}: rank must be a non-negative integer`);
  if (!Number.isSafeInteger(message.step) || message.step < 0 || message.step > MAX_METRIC_STEP) throw new InvalidDataError(`${where}: step must be a non-negative 32-bit integer`);
  if (message.tag !== undefined && (typeof message.tag !== "string" || message.tag.length > MAX_TAG_CHARS)) throw new InvalidDataError(`${where}: tag must be a string of at most ${MAX_TAG_CHARS} characters`);
  if (message.executionId !== undefined && (typeof message.executionId !== "string" || message.executionId.length > MAX_ID_CHARS)) throw new InvalidDataError(`${where}: executionId must be a string of at most ${MAX_ID_CHARS} characters`);
  if (typeof message.values !== "object" || message.values === null) throw new InvalidDataError(`${where}: values must be an object`);
  for (const [name, value] of Object.entries(message.values)) {
    if (!NAME_PATTERN.test(name)) throw new InvalidDataError(`${where}: metric name ${JSON.stringify(name.slice(0, 80))} is not a valid name`);
    if (value !== null && typeof value !== "number") throw new InvalidDataError(`${where}: value of ${name} must be a number or null`);
  }
}

/** A stored parameters object's scalar values (stored JSON is not trusted); null when it is not an object. */
function scalarRecord(value: unknown): Record<string, ParameterValue> | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const entries = Object.entries(value).filter((entry): entry is [string, ParameterValue] => ["string", "number", "boolean"].includes(typeof entry[1]));
  return Object.fromEntries(entries);
}
