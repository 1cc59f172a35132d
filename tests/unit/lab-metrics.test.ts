/**
 * The lab's metrics from what they are told and what they read: notebook
 * events make the cell counters and round-trip histogram, kernel-status
 * events the GPU queue's wait, and a scrape sets every gauge whole (a kernel
 * that ended is not left counted). Sources here are plain objects with the
 * shapes the lab's registry and hosts have; the metrics are the real ones.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HostView } from "../../server/core/protocol/hosts-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { gpuCounts, gpuQueues, kernelCounts, type KernelFact } from "../../server/metrics/lab-gauges";
import { LabMetrics } from "../../server/metrics/lab-metrics";
import { SinceMap } from "../../server/metrics/since-map";

/** The samples of the exposition text: "name{labels}" → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const runState = (cellId: string, state: "queued" | "running" | "idle"): NotebookEvent => ({ type: "cell-run-state", cellId, runState: state, executionCount: null, executionId: null });
const finished = (cellId: string, status: "ok" | "error"): NotebookEvent => ({ type: "cell-finished", cellId, status, durationMs: 5 });
const queuedStatus = (position: number): NotebookEvent => ({ type: "kernel-status", status: { state: "starting", queue: { position, host: "box", gpus: 1 } } });

function hostView(id: string, gpus: Array<boolean>, link: HostView["link"] = "connected"): HostView {
  return {
    id,
    label: id,
    kind: "local",
    target: id,
    link,
    error: null,
    errorOutput: null,
    checkedAt: 1,
    agent: null,
    python: null,
    torch: null,
    cuda: null,
    probe: null,
    gpuSource: "declared",
    gpus: gpus.map((held, index) => ({ index, uuid: `GPU-${index}`, name: "g", memoryTotalMiB: null, memoryUsedMiB: null, utilization: null, heldBy: held ? { owner: null, notebookId: null, title: null, gpus: 1, since: null } : null, reservedFor: null, retiring: false })),
    kernels: null,
    queue: [],
    silentSince: null,
    settings: null,
    problem: null,
  };
}

describe("LabMetrics", () => {
  it("counts cells started and finished by status, and times each from its queued event to its finished event", async () => {
    let now = 1_000;
    const metrics = new LabMetrics({ defaultMetrics: false, clock: () => now });
    metrics.notebookEvent("nb", runState("c1", "queued"));
    now = 1_200;
    metrics.notebookEvent("nb", runState("c1", "running"));
    now = 1_750;
    metrics.notebookEvent("nb", runState("c1", "idle"));
    metrics.notebookEvent("nb", finished("c1", "ok"));
    // A cell resumed from a previous server: started here, its queued event never seen, so no round trip.
    metrics.notebookEvent("nb", runState("c2", "running"));
    metrics.notebookEvent("nb", finished("c2", "error"));
    const seen = samples(await metrics.render());
    assert.equal(seen.get("mgpulab_cells_started_total"), 2);
    assert.equal(seen.get('mgpulab_cells_finished_total{status="ok"}'), 1);
    assert.equal(seen.get('mgpulab_cells_finished_total{status="error"}'), 1);
    assert.equal(seen.get('mgpulab_cells_finished_total{status="kernel-died"}'), 0, "every status is a series from the start");
    assert.equal(seen.get("mgpulab_cell_round_trip_seconds_count"), 1);
    assert.equal(seen.get("mgpulab_cell_round_trip_seconds_sum"), 0.75);
    assert.equal(seen.get('mgpulab_cell_round_trip_seconds_bucket{le="0.5"}'), 0);
    assert.equal(seen.get('mgpulab_cell_round_trip_seconds_bucket{le="1"}'), 1);
  });

  it("a new execute restarts the round trip of its cell", async () => {
    let now = 0;
    const metrics = new LabMetrics({ defaultMetrics: false, clock: () => now });
    metrics.notebookEvent("nb", runState("c", "queued"));
    now = 60_000;
    metrics.notebookEvent("nb", runState("c", "queued"));
    now = 60_100;
    metrics.notebookEvent("nb", finished("c", "ok"));
    assert.equal(samples(await metrics.render()).get("mgpulab_cell_round_trip_seconds_sum"), 0.1);
  });

  it("sets the gauges whole at each scrape from the kernels, the hosts, the workshops and the sockets", async () => {
    let now = 10_000;
    const metrics = new LabMetrics({ defaultMetrics: false, clock: () => now });
    let kernels: KernelFact[] = [
      { notebookId: "a", state: "busy", hostId: "box", queued: false },
      { notebookId: "b", state: "starting", hostId: "box", queued: true },
      { notebookId: "c", state: "idle", hostId: "local", queued: false },
    ];
    metrics.notebookEvent("b", queuedStatus(2));
    now = 14_000;
    metrics.notebookEvent("b", queuedStatus(1)); // moved up: the same wait
    now = 20_000;
    metrics.readFrom({
      kernels: { states: () => kernels },
      hosts: { ids: () => ["local", "box"], view: async () => [hostView("local", [], "disconnected"), hostView("box", [true, false, false])], agent: (id) => ({ lastHealth: id === "box" ? { at: 19_000 } : null }) },
      workshops: async () => ({ active: 1, admitted: 12, waiting: 3 }),
      sockets: () => 7,
    });
    let seen = samples(await metrics.render());
    assert.equal(seen.get('mgpulab_kernels{host="box",state="busy"}'), 1);
    assert.equal(seen.get('mgpulab_kernels{host="box",state="starting"}'), 1);
    assert.equal(seen.get('mgpulab_kernels{host="local",state="idle"}'), 1);
    assert.equal(seen.get('mgpulab_kernels{host="local",state="busy"}'), 0);
    assert.equal(seen.get('mgpulab_gpu_queue_kernels{host="box"}'), 1);
    assert.equal(seen.get('mgpulab_gpu_queue_oldest_wait_seconds{host="box"}'), 10, "from the first queued status");
    assert.equal(seen.get('mgpulab_gpu_queue_oldest_wait_seconds{host="local"}'), 0);
    assert.equal(seen.get('mgpulab_gpus{host="box",state="held"}'), 1);
    assert.equal(seen.get('mgpulab_gpus{host="box",state="free"}'), 2);
    assert.equal(seen.get('mgpulab_gpus{host="local",state="free"}'), 0, "a host without GPUs");
    assert.equal(seen.get('mgpulab_host_link_up{host="box"}'), 1);
    assert.equal(seen.get('mgpulab_host_link_up{host="local"}'), 0);
    assert.equal(seen.get('mgpulab_host_last_health_check_timestamp_seconds{host="box"}'), 19);
    assert.equal(seen.has('mgpulab_host_last_health_check_timestamp_seconds{host="local"}'), false, "never checked: no timestamp");
    assert.equal(seen.get("mgpulab_workshops_active"), 1);
    assert.equal(seen.get('mgpulab_workshop_participants{state="admitted"}'), 12);
    assert.equal(seen.get('mgpulab_workshop_participants{state="waiting"}'), 3);
    assert.equal(seen.get("mgpulab_sockets_connected"), 7);

    // The waiter got its GPU and the busy kernel ended: nothing stays counted.
    metrics.notebookEvent("b", { type: "kernel-status", status: { state: "starting" } });
    kernels = [{ notebookId: "b", state: "idle", hostId: "box", queued: false }];
    seen = samples(await metrics.render());
    assert.equal(seen.get('mgpulab_kernels{host="box",state="busy"}'), 0);
    assert.equal(seen.get('mgpulab_kernels{host="box",state="idle"}'), 1);
    assert.equal(seen.get('mgpulab_gpu_queue_kernels{host="box"}'), 0);
    assert.equal(seen.get('mgpulab_gpu_queue_oldest_wait_seconds{host="box"}'), 0);
  });

  it("a source that fails leaves its gauges out of that scrape and is counted, the rest still served", async () => {
    const told: string[] = [];
    const metrics = new LabMetrics({ defaultMetrics: false, log: (_level, message) => told.push(message) });
    metrics.readFrom({ workshops: async () => Promise.reject(new Error("database is gone")), sockets: () => 2 });
    const seen = samples(await metrics.render());
    assert.ok(Number.isNaN(seen.get("mgpulab_workshops_active")), "not known, not 0");
    assert.equal(seen.has('mgpulab_workshop_participants{state="admitted"}'), false);
    assert.equal(seen.get('mgpulab_metrics_source_errors_total{source="workshops"}'), 1);
    assert.equal(seen.get("mgpulab_sockets_connected"), 2);
    assert.match(told.join("\n"), /workshops failed: database is gone/);
  });

  it("times database statements by provider and operation", async () => {
    const metrics = new LabMetrics({ defaultMetrics: false });
    metrics.databaseStatement({ provider: "postgresql", operation: "execute", seconds: 0.003 });
    const seen = samples(await metrics.render());
    assert.equal(seen.get('mgpulab_db_statement_duration_seconds_count{provider="postgresql",operation="execute"}'), 1);
    assert.equal(seen.get('mgpulab_db_statement_duration_seconds_bucket{le="0.0025",provider="postgresql",operation="execute"}'), 0);
    assert.equal(seen.get('mgpulab_db_statement_duration_seconds_bucket{le="0.005",provider="postgresql",operation="execute"}'), 1);
  });

  it("puts the process's CPU, memory and event-loop lag under the lab's prefix", async () => {
    const text = await new LabMetrics().render();
    for (const family of ["mgpulab_process_cpu_seconds_total", "mgpulab_process_resident_memory_bytes", "mgpulab_nodejs_eventloop_lag_seconds"]) assert.match(text, new RegExp(`^# TYPE ${family} `, "m"));
    assert.doesNotMatch(text, /^# TYPE \w+_total gauge/m, "no gauge named like a counter");
  });
});

describe("the gauges' arithmetic", () => {
  it("kernelCounts: every configured host has every state; a host not configured (or unknown) gets a row when it has kernels", () => {
    const rows = kernelCounts(
      [
        { notebookId: "a", state: "idle", hostId: "gone", queued: false },
        { notebookId: "b", state: "shutdown", hostId: "local", queued: false },
        { notebookId: "c", state: "not-started", hostId: null, queued: false },
        { notebookId: "d", state: "dead", hostId: null, queued: false },
        { notebookId: "e", state: "refused", hostId: "local", queued: false },
      ],
      ["local"],
    );
    const value = (host: string, state: string) => rows.find((row) => row.host === host && row.state === state)?.value;
    assert.equal(rows.filter((row) => row.host === "local").length, 7);
    assert.equal(value("local", "refused"), 1, "a kernel the host refused waits: counted");
    assert.equal(value("local", "idle"), 0, "a shut-down kernel is not counted");
    assert.equal(value("gone", "idle"), 1);
    assert.equal(value("unknown", "dead"), 1);
  });

  it("gpuQueues: counts the waiting kernels per host and the longest wait it knows the start of", () => {
    const waiting = (notebookId: string, hostId: string): KernelFact => ({ notebookId, state: "starting", hostId, queued: true });
    const queues = gpuQueues([waiting("a", "box"), waiting("b", "box"), waiting("c", "box")], ["box", "other"], (id) => ({ a: 4_000, b: 1_000 })[id], 11_000);
    assert.deepEqual(queues, [
      { host: "box", kernels: 3, oldestWaitSeconds: 10 },
      { host: "other", kernels: 0, oldestWaitSeconds: 0 },
    ]);
  });

  it("gpuCounts: a host that never answered a health check has no row (unknown is not zero)", () => {
    assert.deepEqual(gpuCounts([{ ...hostView("new", []), gpuSource: null }, hostView("box", [false, true])]), [{ host: "box", free: 1, held: 1 }]);
  });

  it("SinceMap: keeps the first start, forgets what no longer waits, and stays within its capacity", () => {
    const waits = new SinceMap<string>(2);
    waits.start("a", 1_000);
    waits.start("a", 5_000);
    assert.equal(waits.startedAt("a"), 1_000);
    waits.start("b", 2_000);
    waits.start("c", 3_000);
    assert.equal(waits.size, 2);
    assert.equal(waits.startedAt("a"), undefined, "the oldest went first");
    assert.equal(waits.stop("b", 4_500), 2.5);
    assert.equal(waits.stop("b", 4_500), null);
    waits.retain((key) => key !== "c");
    assert.equal(waits.size, 0);
  });
});
