/**
 * The operator's metrics, scraped by a real Prometheus (Debian's package)
 * from the real lab server: a host declaring one GPU, one notebook's kernel
 * holding it after a cell ran, a second notebook's kernel waiting in the
 * host's GPU queue. Queries through Prometheus' HTTP API see the cell
 * counted, the kernels by state and host, the GPU held and the queue with
 * its wait; the exposition passes `promtool check metrics` (Prometheus'
 * own naming conventions), shows every family an operator greps for, and
 * carries no user text in its labels.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { pollUntilAsync } from "../helpers/daemons";
import { Prometheus, prometheusUnavailable, type PromSample } from "../helpers/prometheus";

const LIMIT = { timeout: 240_000 };
const GPU = { index: 0, uuid: "GPU-33333333-3333-3333-3333-333333333333", name: "Declared G0", memoryTotalMiB: 1024 };
/** A title no label may carry. */
const TITLE = "Zebra-Quartz notebook of Ada";

/** Every family the README's check (`curl -s localhost:PORT/metrics | grep mgpulab_`) shows. */
const FAMILIES = [
  "mgpulab_kernels",
  "mgpulab_gpus",
  "mgpulab_gpu_queue_kernels",
  "mgpulab_gpu_queue_oldest_wait_seconds",
  "mgpulab_cells_started_total",
  "mgpulab_cells_finished_total",
  "mgpulab_cell_round_trip_seconds",
  "mgpulab_nodejs_eventloop_lag_seconds",
  "mgpulab_sockets_connected",
  "mgpulab_workshops_active",
  "mgpulab_workshop_participants",
  "mgpulab_host_link_up",
  "mgpulab_host_last_health_check_timestamp_seconds",
  "mgpulab_db_statement_duration_seconds",
  "mgpulab_process_cpu_seconds_total",
  "mgpulab_process_resident_memory_bytes",
];

/** The only label values the lab's own families may carry: fixed words and the operator's host ids. */
const ALLOWED_LABELS: Record<string, RegExp> = {
  host: /^local$/,
  state: /^(starting|idle|busy|interrupting|restarting|refused|dead|free|held|admitted|waiting)$/,
  status: /^(ok|error|interrupted|aborted|kernel-died)$/,
  provider: /^(sqlite|postgresql)$/,
  operation: /^(query|execute)$/,
  source: /^(hosts|workshops)$/,
  le: /^([0-9.e+-]+|\+Inf)$/,
};

async function notebookAskingOneGpu(client: TestClient, title: string): Promise<{ notebookId: string; cellId: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const notebookId = created.notebook.id;
  const opened = await client.send({ op: "open", notebookId });
  assert.ok(opened.ok && opened.notebook);
  assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId, hostId: "local", gpus: 1 }), { ok: true });
  return { notebookId, cellId: opened.notebook.cells[0]!.id };
}

function only(samples: PromSample[], what: string): number {
  assert.equal(samples.length, 1, `${what}: one series, got ${JSON.stringify(samples)}`);
  return samples[0]!.value;
}

describe("metrics scraped by a real Prometheus", { skip: prometheusUnavailable() ?? false }, () => {
  let dataDir: string;
  let server: LabServer;
  let client: TestClient;
  let prometheus: Prometheus;
  const notebooks: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-metrics-"));
    writeFileSync(path.join(dataDir, "hosts.json"), JSON.stringify({ hosts: [{ id: "local", kind: "local", label: "one declared GPU", gpus: [GPU], whenFull: "queue" }] }));
    server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
    client = await connectClient(server.url);
    prometheus = await Prometheus.start([{ job: "mgpulab", target: new URL(server.url).host }]);
  });
  after(async () => {
    for (const notebookId of notebooks) await client?.send({ op: "shutdown", notebookId });
    client?.close();
    await prometheus?.stop();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("sees a cell counted, a kernel holding the GPU and another waiting in the host's queue", LIMIT, async () => {
    const holder = await notebookAskingOneGpu(client, TITLE);
    notebooks.push(holder.notebookId);
    assert.deepEqual(await client.run(holder.notebookId, { [holder.cellId]: "print('holds the GPU')" }), { ok: true });
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === holder.cellId);

    const waiter = await notebookAskingOneGpu(client, `${TITLE} (waits)`);
    notebooks.push(waiter.notebookId);
    assert.deepEqual(await client.run(waiter.notebookId, { [waiter.cellId]: "print('got it')" }), { ok: true });
    await client.waitFor((event) => event.type === "kernel-status" && event.status.state === "starting" && event.status.queue !== undefined);

    const scraped = await pollUntilAsync("Prometheus to scrape the lab", async () => {
      const targets = await prometheus.targets();
      return targets.some((target) => target.job === "mgpulab" && target.health === "up") && targets;
    }, 60_000, 500);
    assert.ok(scraped);

    // Each query is retried until the scrape after the state it expects has landed.
    const settled = async (promql: string, accept: (samples: PromSample[]) => boolean): Promise<PromSample[]> =>
      pollUntilAsync(`${promql} in Prometheus`, async () => {
        const samples = await prometheus.query(promql);
        return accept(samples) && samples;
      }, 60_000, 500);

    const finished = await settled('mgpulab_cells_finished_total{status="ok"}', (samples) => samples[0] !== undefined && samples[0].value >= 1);
    assert.equal(only(finished, "cells finished ok"), 1);
    assert.equal(only(await settled("mgpulab_cells_started_total", (s) => s.length === 1 && s[0]!.value >= 1), "cells started"), 1);
    assert.equal(only(await settled("mgpulab_cell_round_trip_seconds_count", (s) => s.length === 1 && s[0]!.value >= 1), "round trips"), 1);

    const held = await settled('mgpulab_gpus{host="local"}', (samples) => samples.length === 2);
    assert.deepEqual(Object.fromEntries(held.map((sample) => [sample.metric.state, sample.value])), { free: 0, held: 1 }, "the one GPU is held");
    assert.equal(only(await settled('mgpulab_kernels{host="local",state="idle"}', (s) => s.length === 1 && s[0]!.value === 1), "idle kernels"), 1, "the holder's kernel");
    assert.equal(only(await settled('mgpulab_kernels{host="local",state="starting"}', (s) => s.length === 1 && s[0]!.value === 1), "starting kernels"), 1, "the waiter's kernel");
    assert.equal(only(await settled('mgpulab_gpu_queue_kernels{host="local"}', (s) => s.length === 1 && s[0]!.value === 1), "queued"), 1, "one kernel waits for a GPU");
    const waited = only(await settled('mgpulab_gpu_queue_oldest_wait_seconds{host="local"}', (s) => s.length === 1 && s[0]!.value > 0), "oldest wait");
    assert.ok(waited > 0 && waited < 600, `the wait is measured: ${waited} s`);
    assert.equal(only(await settled('mgpulab_host_link_up{host="local"}', (s) => s.length === 1), "link"), 1);
    const checked = only(await settled('mgpulab_host_last_health_check_timestamp_seconds{host="local"}', (s) => s.length === 1), "last health");
    assert.ok(Math.abs(checked - Date.now() / 1000) < 600, `the last health check is recent: ${checked}`);
    assert.ok(only(await settled("mgpulab_sockets_connected", (s) => s.length === 1 && s[0]!.value >= 1), "sockets") >= 1);
    assert.ok((await settled('sum(mgpulab_db_statement_duration_seconds_count{provider="sqlite"})', (s) => s.length === 1 && s[0]!.value > 0))[0]!.value > 0);
    assert.equal(only(await settled("mgpulab_workshops_active", (s) => s.length === 1), "workshops"), 0);
    assert.ok(only(await settled("mgpulab_process_resident_memory_bytes", (s) => s.length === 1), "memory") > 10 * 1024 * 1024);

    // The freed GPU goes to the waiter: the queue empties.
    assert.deepEqual(await client.send({ op: "shutdown", notebookId: holder.notebookId }), { ok: true });
    await client.waitFor((event) => event.type === "cell-finished" && event.cellId === waiter.cellId);
    await settled('mgpulab_gpu_queue_kernels{host="local"}', (s) => s.length === 1 && s[0]!.value === 0);
    assert.equal(only(await prometheus.query('mgpulab_gpu_queue_oldest_wait_seconds{host="local"}'), "oldest wait after"), 0);
  });

  it("shows every family an operator greps for, named by Prometheus' conventions, with no user text in a label", LIMIT, async () => {
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const families = new Set([...text.matchAll(/^# TYPE (mgpulab_\w+) /gm)].map((match) => match[1]!));
    assert.deepEqual(FAMILIES.filter((family) => !families.has(family)), [], "every family is there");

    const lint = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(lint.status, 0, `promtool check metrics: ${lint.stdout}${lint.stderr}`);

    assert.ok(!text.includes("Zebra-Quartz"), "a notebook's title is in no label");
    const own = text.split("\n").filter((line) => /^mgpulab_/.test(line) && !/^mgpulab_(nodejs|process)_/.test(line));
    assert.ok(own.length > 20);
    for (const line of own) {
      for (const [, name, value] of line.matchAll(/(\w+)="([^"]*)"/g)) {
        const allowed = ALLOWED_LABELS[name!];
        assert.ok(allowed, `label ${name} on ${line} is not one of the lab's`);
        assert.match(value!, allowed, `${line}: ${name}="${value}"`);
      }
    }
  });
});
