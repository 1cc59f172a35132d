/**
 * Streams arrive in thousands of small chunks; viewers get them merged, a few
 * dozen times a second, with discrete events always after the text that
 * preceded them. Tail snapshots (flooding cells) go out at a slower cadence.
 */
import type { LiveMetrics } from "../core/protocol/notebook-model";
import type { MetricPointMessage } from "../core/protocol/metrics-model";
import type { NotebookEvent } from "../core/protocol/socket-api";
import type { StreamName, StreamSegment } from "./output-recorder";

export interface CoalescerOptions {
  appendIntervalMs: number;
  tailIntervalMs: number;
  /** Live chart points: ten frames a second is smooth for a chart and cheap for a socket. */
  pointsIntervalMs?: number;
}

export const DEFAULT_COALESCING: CoalescerOptions = { appendIntervalMs: 30, tailIntervalMs: 250, pointsIntervalMs: 100 };

/** Points per cell-metric-points event: a flooding run sends several events, never one huge one. */
const POINTS_PER_EVENT = 5_000;

export interface TailSource {
  tailOf(cellId: string): { elided: number; segments: StreamSegment[]; headOutputs: number } | null;
  liveMetricsOf(cellId: string): LiveMetrics | null;
}

export class EventCoalescer {
  private appends: Array<{ cellId: string; name: StreamName; text: string }> = [];
  private dirtyTails = new Set<string>();
  private dirtyMetrics = new Set<string>();
  private points: Array<{ cellId: string; executionId: string; points: MetricPointMessage[] }> = [];
  private pointsTimer: NodeJS.Timeout | null = null;
  private appendTimer: NodeJS.Timeout | null = null;
  private tailTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (event: NotebookEvent) => void,
    private readonly tails: TailSource,
    private readonly options: CoalescerOptions = DEFAULT_COALESCING,
  ) {}

  append(cellId: string, name: StreamName, text: string): void {
    const last = this.appends[this.appends.length - 1];
    if (last && last.cellId === cellId && last.name === name) last.text += text;
    else this.appends.push({ cellId, name, text });
    this.appendTimer ??= setTimeout(() => this.flushAppends(), this.options.appendIntervalMs);
  }

  tailChanged(cellId: string): void {
    this.dirtyTails.add(cellId);
    this.tailTimer ??= setTimeout(() => this.flushTails(), this.options.tailIntervalMs);
  }

  /** Live metrics go out at the tail cadence: a table refreshed a few times a second. */
  metricsChanged(cellId: string): void {
    this.dirtyMetrics.add(cellId);
    this.tailTimer ??= setTimeout(() => this.flushTails(), this.options.tailIntervalMs);
  }

  metricPoint(cellId: string, executionId: string, point: MetricPointMessage): void {
    const last = this.points[this.points.length - 1];
    if (last && last.cellId === cellId && last.executionId === executionId && last.points.length < POINTS_PER_EVENT) last.points.push(point);
    else this.points.push({ cellId, executionId, points: [point] });
    this.pointsTimer ??= setTimeout(() => this.flushPoints(), this.options.pointsIntervalMs ?? DEFAULT_COALESCING.pointsIntervalMs);
  }

  /** A discrete event: everything pending goes first so order is preserved. */
  emit(event: NotebookEvent): void {
    this.flush();
    this.send(event);
  }

  flush(): void {
    this.flushAppends();
    this.flushPoints();
    this.flushTails();
  }

  dispose(): void {
    if (this.appendTimer) clearTimeout(this.appendTimer);
    if (this.tailTimer) clearTimeout(this.tailTimer);
    if (this.pointsTimer) clearTimeout(this.pointsTimer);
    this.appendTimer = this.tailTimer = this.pointsTimer = null;
    this.appends = [];
    this.points = [];
    this.dirtyTails.clear();
    this.dirtyMetrics.clear();
  }

  private flushAppends(): void {
    if (this.appendTimer) clearTimeout(this.appendTimer);
    this.appendTimer = null;
    const pending = this.appends;
    this.appends = [];
    for (const { cellId, name, text } of pending) this.send({ type: "cell-stream", cellId, name, text });
  }

  private flushPoints(): void {
    if (this.pointsTimer) clearTimeout(this.pointsTimer);
    this.pointsTimer = null;
    const pending = this.points;
    this.points = [];
    for (const batch of pending) this.send({ type: "cell-metric-points", ...batch });
  }

  private flushTails(): void {
    if (this.tailTimer) clearTimeout(this.tailTimer);
    this.tailTimer = null;
    const dirty = [...this.dirtyTails];
    this.dirtyTails.clear();
    for (const cellId of dirty) {
      const tail = this.tails.tailOf(cellId);
      if (tail) this.send({ type: "cell-stream-tail", cellId, elidedBytes: tail.elided, tail: tail.segments, headOutputs: tail.headOutputs });
    }
    const metrics = [...this.dirtyMetrics];
    this.dirtyMetrics.clear();
    for (const cellId of metrics) {
      const liveMetrics = this.tails.liveMetricsOf(cellId);
      if (liveMetrics) this.send({ type: "cell-metrics", cellId, liveMetrics: structuredClone(liveMetrics) });
    }
  }
}
