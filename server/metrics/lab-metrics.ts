/**
 * The lab's Prometheus metrics (prom-client), served at /metrics by the HTTP
 * edge. Two kinds of input:
 *
 * - Events, told as they happen: every notebook event this server
 *   broadcasts (cells queued, started, finished; kernels waiting for GPUs)
 *   and every database statement (persistence/timed-adapter.ts). Counters and
 *   histograms.
 * - Sources, read at each scrape: the kernel registry, the hosts (their
 *   agents' health, asked afresh as the hosts page does), the workshops in
 *   the database, the connected sockets. Gauges, reset and set whole, so a
 *   kernel that ended is not left counted; a source that cannot be read
 *   leaves its gauges out of that scrape (NaN for one without labels).
 *
 * Names follow Prometheus' conventions: the `mgpulab_` prefix, base units
 * (seconds, bytes), `_total` on counters. Labels carry only fixed words and
 * the operator's host ids: no notebook title, user name or growing id. The
 * process's CPU, memory and event-loop lag are prom-client's default
 * collectors under the same prefix.
 *
 * In a lab of several servers each reports what it drives (kernels, cells,
 * queues, sockets: sum() them); host GPUs and workshops are lab-wide facts
 * every server reports alike (max() them).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { NotebookEvent } from "../core/protocol/socket-api";
import type { HostView } from "../core/protocol/hosts-model";
import type { DatabaseStatement } from "../persistence/timed-adapter";
import { gpuCounts, gpuQueues, kernelCounts, type KernelFact } from "./lab-gauges";
import { SinceMap } from "./since-map";
import type { WorkshopCounts } from "./workshop-counts";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

/** What a scrape reads. Each is optional: a lab without hosts (tests) has no host gauges. */
export interface MetricSources {
  kernels?: { states(): Iterable<KernelFact> };
  hosts?: {
    ids(): string[];
    /** Every host as the hosts page shows it (connected agents are asked for their health, briefly). */
    view(): Promise<HostView[]>;
    agent(hostId: string): { lastHealth: { at: number } | null } | undefined;
  };
  workshops?: () => Promise<WorkshopCounts>;
  sockets?: () => number;
}

const FINISHED_STATUSES = ["ok", "error", "interrupted", "aborted", "kernel-died"] as const satisfies ReadonlyArray<Extract<NotebookEvent, { type: "cell-finished" }>["status"]>;

/** Seconds; a trivial cell is tens of milliseconds, a training cell minutes to an hour. */
const ROUND_TRIP_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Seconds; a statement of this lab is well under a millisecond to tens of milliseconds. */
const STATEMENT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export class LabMetrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};
  private scraping: Promise<string> | null = null;
  /** Cells from their queued event (per notebook and cell) to their finished event. */
  private readonly cellWaits = new SinceMap<string>();
  /** Notebooks whose kernel waits in a GPU queue, since when. */
  private readonly gpuWaits = new SinceMap<string>();

  private readonly cellsStarted = this.counter("mgpulab_cells_started_total", "Cells that started running on a kernel this server drives.");
  private readonly cellsFinished = this.counter("mgpulab_cells_finished_total", "Cells that finished, by how they ended (ok, error, interrupted, aborted, kernel-died).", ["status"]);
  private readonly roundTrip = new Histogram({
    name: "mgpulab_cell_round_trip_seconds",
    help: "From a cell's execute (queued) to its finished event, as this server sends them to viewers: queueing, kernel start and the run itself.",
    buckets: ROUND_TRIP_BUCKETS,
    registers: [this.registry],
  });
  private readonly statements = new Histogram({
    name: "mgpulab_db_statement_duration_seconds",
    help: "Database statements of this server, by provider (sqlite, postgresql) and operation (query: rows back; execute: a write).",
    labelNames: ["provider", "operation"],
    buckets: STATEMENT_BUCKETS,
    registers: [this.registry],
  });
  private readonly sourceErrors = this.counter("mgpulab_metrics_source_errors_total", "Scrapes where a source could not be read (its gauges are left out of that scrape), by source.", ["source"]);
  private readonly kernels = this.gauge("mgpulab_kernels", "Kernels of the notebooks this server drives, by host and state.", ["host", "state"]);
  private readonly gpus = this.gauge("mgpulab_gpus", "GPUs of each host by state (free, held by a kernel), from its agent's latest health answer.", ["host", "state"]);
  private readonly queueLength = this.gauge("mgpulab_gpu_queue_kernels", "Kernels of this server waiting in a host's GPU queue.", ["host"]);
  private readonly queueWait = this.gauge("mgpulab_gpu_queue_oldest_wait_seconds", "How long the kernel of this server waiting longest in a host's GPU queue has waited (0: none waits).", ["host"]);
  private readonly linkUp = this.gauge("mgpulab_host_link_up", "1 while this server's link to the host's agent is open, else 0.", ["host"]);
  private readonly lastHealth = this.gauge("mgpulab_host_last_health_check_timestamp_seconds", "When the host's agent last answered a health check (Unix time).", ["host"]);
  private readonly sockets = this.gauge("mgpulab_sockets_connected", "Browser connections (socket.io) to this server.");
  private readonly workshopsActive = this.gauge("mgpulab_workshops_active", "Workshops started and not ended.");
  private readonly participants = this.gauge("mgpulab_workshop_participants", "Participants of workshops not ended: admitted, or waiting in the admission queue.", ["state"]);

  constructor(private readonly options: { log?: Log; clock?: () => number; defaultMetrics?: boolean } = {}) {
    // Every way a cell ends is a series from the start: a query finds 0, not nothing, before the first error.
    for (const status of FINISHED_STATUSES) this.cellsFinished.inc({ status }, 0);
    // The process's CPU, memory, event-loop lag and GC, under the lab's prefix.
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: "mgpulab_" });
      // Gauges named like counters (prom-client's totals of the per-type gauges beside them): left out, so every name follows the conventions (promtool check metrics).
      for (const name of ["active_handles_total", "active_requests_total", "active_resources_total"]) this.registry.removeSingleMetric(`mgpulab_nodejs_${name}`);
    }
  }

  /** Where scrapes read the lab's state (once the lab is open). */
  readFrom(sources: MetricSources): void {
    this.sources = sources;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** A notebook event this server sends its viewers. */
  notebookEvent(notebookId: string, event: NotebookEvent): void {
    const now = this.now();
    switch (event.type) {
      case "cell-run-state": {
        const key = `${notebookId}\n${event.cellId}`;
        if (event.runState === "queued") {
          // A new execute starts a new round trip, even if the last one's end was missed.
          this.cellWaits.stop(key, now);
          this.cellWaits.start(key, now);
        } else if (event.runState === "running") this.cellsStarted.inc();
        return;
      }
      case "cell-finished": {
        this.cellsFinished.inc({ status: event.status });
        const seconds = this.cellWaits.stop(`${notebookId}\n${event.cellId}`, now);
        if (seconds !== null) this.roundTrip.observe(seconds);
        return;
      }
      case "kernel-status":
        // The first queued status starts the wait; a move in the queue is the same wait; anything else ends it.
        if (event.status.state === "starting" && event.status.queue !== undefined) this.gpuWaits.start(notebookId, now);
        else this.gpuWaits.stop(notebookId, now);
        return;
      default:
        return;
    }
  }

  /** One database statement (told by the timed adapter). */
  readonly databaseStatement = (statement: DatabaseStatement): void => {
    this.statements.observe({ provider: statement.provider, operation: statement.operation }, statement.seconds);
  };

  /** The exposition text. Concurrent scrapes share one reading of the sources (gauges are reset and set whole). */
  render(): Promise<string> {
    this.scraping ??= this.scrape().finally(() => {
      this.scraping = null;
    });
    return this.scraping;
  }

  private async scrape(): Promise<string> {
    const { kernels, hosts, workshops, sockets } = this.sources;
    const now = this.now();
    const facts = kernels ? [...kernels.states()] : [];
    const hostIds = hosts?.ids() ?? [];
    const [views, counts] = await Promise.all([this.read("hosts", () => hosts?.view()), this.read("workshops", () => workshops?.())]);

    this.kernels.reset();
    if (kernels) for (const row of kernelCounts(facts, hostIds)) this.kernels.set({ host: row.host, state: row.state }, row.value);
    this.queueLength.reset();
    this.queueWait.reset();
    if (kernels) {
      const queued = new Set(facts.filter((fact) => fact.queued).map((fact) => fact.notebookId));
      this.gpuWaits.retain((notebookId) => queued.has(notebookId));
      for (const queue of gpuQueues(facts, hostIds, (notebookId) => this.gpuWaits.startedAt(notebookId), now)) {
        this.queueLength.set({ host: queue.host }, queue.kernels);
        this.queueWait.set({ host: queue.host }, queue.oldestWaitSeconds);
      }
    }
    this.setHostGauges(views, hosts);
    this.participants.reset();
    // A gauge without labels cannot be left out: NaN says "not known at this scrape", where 0 would be a false count.
    this.workshopsActive.set(counts ? counts.active : Number.NaN);
    if (counts) {
      this.participants.set({ state: "admitted" }, counts.admitted);
      this.participants.set({ state: "waiting" }, counts.waiting);
    }
    this.sockets.reset();
    if (sockets) this.sockets.set(sockets());
    return this.registry.metrics();
  }

  private setHostGauges(views: HostView[] | undefined, hosts: MetricSources["hosts"]): void {
    this.gpus.reset();
    this.linkUp.reset();
    this.lastHealth.reset();
    if (!views || !hosts) return;
    for (const row of gpuCounts(views)) {
      this.gpus.set({ host: row.host, state: "free" }, row.free);
      this.gpus.set({ host: row.host, state: "held" }, row.held);
    }
    for (const view of views) {
      this.linkUp.set({ host: view.id }, view.link === "connected" ? 1 : 0);
      const health = hosts.agent(view.id)?.lastHealth;
      if (health) this.lastHealth.set({ host: view.id }, health.at / 1000);
    }
  }

  /** A source's answer; undefined (its gauges left out, the error counted and logged) when it fails. */
  private async read<T>(source: string, body: () => Promise<T> | undefined): Promise<T | undefined> {
    try {
      return await body();
    } catch (error) {
      this.sourceErrors.inc({ source });
      this.options.log?.("warning", `metrics: reading ${source} failed: ${errorMessage(error)}`);
      return undefined;
    }
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
