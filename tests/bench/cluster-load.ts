/**
 * Benchmark: many participants over several lab servers (issue "Past one
 * server"). The real servers (server/main.ts) on one database, meeting in a
 * real Redis, behind a real nginx, all on loopback: once with one server
 * behind the balancer, once with two, same machine, same run. N simulated
 * participants (socket.io clients through nginx, WebSocket only) each open
 * their own notebook and kernel, then run trivial cells (`1+1`) with a think
 * time between; the round trip is execute → cell-finished, as a page sees it.
 * Reports p50/p99 per configuration and the gain of two servers over one,
 * with each server's CPU. Exits 1 when a cell was lost or the run overran.
 *
 *   npx tsx tests/bench/cluster-load.ts [--participants 200] [--cells 5] [--think-ms 1000]
 *     [--servers 1,2] [--limit-s 400] [--database sqlite|postgres] [--json file]
 *
 * `--database postgres` (the default) puts the servers on a throwaway
 * PostgreSQL (tests/helpers/postgres.ts); sqlite shares one file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { sourceHash } from "../../server/core/protocol/source-hash";
import { freePort, NginxBalancer, RedisService } from "../helpers/cluster-services";
import { startPostgres } from "../helpers/postgres";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}

const PARTICIPANTS = Number(option("participants", "200"));
const CELLS = Number(option("cells", "5"));
const THINK_MS = Number(option("think-ms", "1000"));
const SERVER_COUNTS = option("servers", "1,2").split(",").map(Number);
const LIMIT_S = Number(option("limit-s", "400"));
const DATABASE = option("database", "postgres");
const JSON_OUT = option("json", "");

const say = (line: string) => process.stdout.write(`[cluster-load] ${line}\n`);

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Phase {
  servers: number;
  participants: number;
  ready: number;
  readyS: number;
  cells: number;
  /** Participants that failed (an error, not a slow cell). */
  failed: number;
  /** Trivial cells not run to the end (failed participants' included). */
  lost: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  serverCpuS: number[];
  wallS: number;
}

async function database(): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  if (DATABASE !== "postgres") return { env: {}, stop: async () => undefined };
  // Durable: commits wait for the disk, as in production.
  const postgres = await startPostgres({ durable: true, maxConnections: 300 });
  return { env: { MGPULAB_DATABASE_URL: await postgres.createDatabase("bench") }, stop: () => postgres.stop() };
}

async function phase(servers: number): Promise<Phase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-cluster-bench-"));
  const redis = await RedisService.start();
  const db = await database();
  const balancerPort = await freePort();
  const env = {
    ...db.env,
    MGPULAB_DATA_DIR: dataDir,
    MGPULAB_AGENT_RUNTIME_DIR: path.join(dataDir, "agents"),
    MGPULAB_REDIS_URL: redis.url,
    MGPULAB_ALLOWED_ORIGINS: `http://127.0.0.1:${balancerPort}`,
    MGPULAB_MAX_KERNELS: String(PARTICIPANTS),
    MGPULAB_LOGIN_RATE_LIMIT: "100000/60",
  };
  const labs: LabServer[] = [];
  const clients: TestClient[] = [];
  let nginx: NginxBalancer | null = null;
  try {
    for (let i = 0; i < servers; i += 1) labs.push(await LabServer.start(env, 120_000));
    nginx = await NginxBalancer.start(balancerPort, labs.map((lab) => Number(new URL(lab.url).port)));
    const cookie = labs[0]!.cookie!;
    const cpuBefore = labs.map((lab) => cpuSeconds(lab.pid));
    const began = performance.now();
    const deadline = began + LIMIT_S * 1000;
    const roundTrips: number[] = [];
    let ready = 0;
    let failed = 0;
    let readyAt = 0;
    const participant = async (index: number): Promise<void> => {
      const client = await connectClient(nginx!.url, cookie);
      clients.push(client);
      const created = await client.sendLab({ op: "create-notebook", title: `participant ${index}` });
      if (!created.ok || !created.notebook) throw new Error(`create: ${JSON.stringify(created)}`);
      const notebookId = created.notebook.id;
      const opened = await client.send({ op: "open", notebookId });
      if (!opened.ok || !opened.notebook) throw new Error(`open: ${JSON.stringify(opened)}`);
      const cellId = opened.notebook.cells[0]!.id;
      const saved = await client.send({ op: "set-source", notebookId, cellId, source: "1+1" });
      if (!saved.ok) throw new Error(`set-source: ${JSON.stringify(saved)}`);
      const run = async (): Promise<number> => {
        const finished = client.events.filter((event) => event.type === "cell-finished" && event.cellId === cellId).length;
        const sent = performance.now();
        const ack = await client.send({ op: "execute", notebookId, cellIds: [cellId], sourceHashes: { [cellId]: sourceHash("1+1") } });
        if (!ack.ok) throw new Error(`execute: ${JSON.stringify(ack)}`);
        await client.waitFor(() => client.events.filter((event) => event.type === "cell-finished" && event.cellId === cellId).length > finished);
        return performance.now() - sent;
      };
      await run(); // the kernel starts: not counted
      ready += 1;
      if (ready === PARTICIPANTS) readyAt = performance.now();
      // Everyone measures once everyone's kernel is up (a start is not a round trip).
      while (ready < PARTICIPANTS && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < CELLS && performance.now() < deadline; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, THINK_MS * (0.5 + Math.random())));
        roundTrips.push(await run());
      }
    };
    const outcomes = await Promise.race([
      Promise.allSettled(Array.from({ length: PARTICIPANTS }, (_, i) => participant(i))),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), LIMIT_S * 1000 + 30_000)),
    ]);
    if (outcomes === null) say(`the run overran ${LIMIT_S + 30} s`);
    for (const outcome of outcomes ?? []) {
      if (outcome.status === "rejected") {
        failed += 1;
        say(`a participant failed: ${outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason)}`);
      }
    }
    const result: Phase = {
      servers,
      participants: PARTICIPANTS,
      ready,
      readyS: readyAt > 0 ? Math.round((readyAt - began) / 100) / 10 : Number.NaN,
      cells: roundTrips.length,
      failed,
      lost: PARTICIPANTS * CELLS - roundTrips.length,
      p50Ms: Math.round(percentile(roundTrips, 0.5) * 10) / 10,
      p99Ms: Math.round(percentile(roundTrips, 0.99) * 10) / 10,
      maxMs: Math.round(Math.max(...roundTrips) * 10) / 10,
      serverCpuS: labs.map((lab, i) => Math.round((cpuSeconds(lab.pid) - cpuBefore[i]!) * 10) / 10),
      wallS: Math.round((performance.now() - began) / 100) / 10,
    };
    say(
      `${servers} server(s): ${result.ready}/${PARTICIPANTS} kernels up in ${result.readyS} s; ${result.cells} trivial cells, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms; server CPU ${result.serverCpuS.join(" + ")} s in ${result.wallS} s`,
    );
    return result;
  } finally {
    for (const client of clients) client.close();
    for (const lab of labs) await lab.stop("SIGTERM");
    await nginx?.stop();
    await redis.stop();
    await db.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  say(`${PARTICIPANTS} participants, ${CELLS} trivial cells each, think ${THINK_MS} ms; ${cpus().length} cores; database ${DATABASE}`);
  const phases: Phase[] = [];
  for (const servers of SERVER_COUNTS) phases.push(await phase(servers));
  const [one, two] = [phases.find((p) => p.servers === 1), phases.find((p) => p.servers === 2)];
  if (one && two) say(`two servers over one: p50 ×${(one.p50Ms / two.p50Ms).toFixed(2)}, p99 ×${(one.p99Ms / two.p99Ms).toFixed(2)} (above 1: two are faster)`);
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ participants: PARTICIPANTS, cells: CELLS, thinkMs: THINK_MS, database: DATABASE, phases }, null, 2));
  return phases.some((p) => p.lost > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`cluster-load: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
