/**
 * What "durable before visible" costs a viewer: the lab's real path (socket.io
 * client → server → kernel → SQLite → viewer) with viewers told only after
 * each commit, against the same path telling them at once (the old
 * behaviour), in the same run, rounds interleaved. Not a test: nothing here
 * asserts. The lab has no switch for the old behaviour: this benchmark
 * rebuilds it (tellAtOnce) by giving each notebook's runtime a group commit
 * that starts the writes and resolves at once, so the runtime's own
 * durability gate lets events out without waiting for SQLite.
 *
 *   npx tsx tests/bench/durability.ts [--rounds 300 --megabytes 20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Server } from "socket.io";
import { labNames } from "../../server/http/request-guard";
import { localHost } from "../../server/kernel/kernel-host";
import { openLab, type Lab } from "../../server/lab";
import { createLogger, logTo } from "../../server/logger";
import type { ClientToServerEvents, NotebookEvent, ServerToClientEvents } from "../../server/core/protocol/socket-api";
import { attachNotebookSocket, roomOf, socketServerOptions } from "../../server/socket/notebook-socket";
import { batchedBroadcast } from "../../server/socket/notebook-events";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { signInLocalAdmin } from "../helpers/lab-session";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!;
}

interface Setup {
  lab: Lab;
  http: HttpServer;
  io: Server<ClientToServerEvents, ServerToClientEvents>;
  client: TestClient;
  notebookId: string;
  cellId: string;
  dataDir: string;
}

/**
 * The old behaviour on an unchanged lab: each loaded notebook's `commit()`
 * starts the same writes and resolves before they are stored, so viewers
 * are told at once and SQLite catches up behind them.
 */
function tellAtOnce(lab: Lab): void {
  const load = lab.catalog.load.bind(lab.catalog);
  lab.catalog.load = async (notebookId) => {
    const loaded = await load(notebookId);
    const commit = loaded.persistence.commit.bind(loaded.persistence);
    loaded.persistence.commit = () => {
      commit().catch((error: unknown) => console.error(`a commit not waited for failed: ${String(error)}`));
      return Promise.resolve();
    };
    return loaded;
  };
}

async function setUp(durable: boolean): Promise<Setup> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-durability-"));
  const http = createServer();
  const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, socketServerOptions(() => names, () => undefined));
  const lab = await openLab({
    dataDir,
    host: () => localHost(),
    broadcast: batchedBroadcast((notebookId, firstSeq, events) => io.to(roomOf(notebookId)).emit("notebook:events", notebookId, firstSeq, events)),
  });
  if (!durable) tellAtOnce(lab);
  attachNotebookSocket(io, { hub: lab.hub, drivers: lab.drivers, scenarios: lab.scenarios, hosts: null, access: lab.access, workshops: lab.workshops, repositories: lab.repositories, log: logTo(createLogger("silent")) });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  await signInLocalAdmin(lab, `http://127.0.0.1:${port}`);
  const names = labNames("127.0.0.1", port);
  const client = await connectClient(`http://127.0.0.1:${port}`);
  const created = await client.sendLab({ op: "create-notebook", title: "bench" });
  if (!created.ok || !created.notebook) throw new Error("could not create the notebook");
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  if (!opened.ok || !opened.notebook) throw new Error("could not open the notebook");
  return { lab, http, io, client, notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id, dataDir };
}

async function tearDown(setup: Setup): Promise<void> {
  setup.client.close();
  await setup.lab.close();
  await new Promise<void>((resolve) => void setup.io.close(() => resolve()));
  setup.http.closeAllConnections();
  rmSync(setup.dataDir, { recursive: true, force: true });
}

/** Runs `source` in the cell; resolves with the milliseconds until the viewer is told it finished. */
async function runCell(setup: Setup, source: string): Promise<number> {
  const before = setup.client.events.length;
  const begin = performance.now();
  const finished = setup.client.waitFor((event: NotebookEvent) => event.type === "cell-finished" && setup.client.events.indexOf(event) >= before);
  const ack = await setup.client.run(setup.notebookId, { [setup.cellId]: source });
  if (!ack.ok) throw new Error(`execute refused: ${ack.error}`);
  await finished;
  const elapsed = performance.now() - begin;
  setup.client.events.length = 0; // keep memory flat over hundreds of rounds
  setup.client.seqs.length = 0;
  return elapsed;
}

async function main(): Promise<void> {
  const rounds = option("rounds", 300);
  const megabytes = option("megabytes", 20);
  localHost();
  const durable = await setUp(true);
  const immediate = await setUp(false);
  const trips: Record<"durable" | "immediate", number[]> = { durable: [], immediate: [] };
  const floods: Record<"durable" | "immediate", number[]> = { durable: [], immediate: [] };
  for (const setup of [durable, immediate]) for (let i = 0; i < 20; i++) await runCell(setup, "1"); // warm up
  for (let i = 0; i < rounds; i++) {
    // Interleaved, so the shared machine's drift touches both alike.
    trips.durable.push(await runCell(durable, "1"));
    trips.immediate.push(await runCell(immediate, "1"));
  }
  const flood = `import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(${megabytes * 1000}):\n    sys.stdout.write(line)\nsys.stdout.flush()`;
  for (let i = 0; i < 3; i++) {
    floods.durable.push(await runCell(durable, flood));
    floods.immediate.push(await runCell(immediate, flood));
  }
  await tearDown(durable);
  await tearDown(immediate);

  const rows = [
    [`trivial cell, execute → viewer told it finished, median of ${rounds}`, quantile(trips.immediate, 0.5), quantile(trips.durable, 0.5), "ms"],
    [`same, p99 of ${rounds}`, quantile(trips.immediate, 0.99), quantile(trips.durable, 0.99), "ms"],
    [`${megabytes} MB printed, to the viewer's cell-finished, median of 3`, megabytes / (quantile(floods.immediate, 0.5) / 1000), megabytes / (quantile(floods.durable, 0.5) / 1000), "MB/s"],
  ] as const;
  console.log("| measurement | told at once | durable before visible | cost |");
  console.log("| --- | ---: | ---: | --- |");
  for (const [label, before, after, unit] of rows) {
    // Signed: "+0.15 ms" is slower, "−0.06 ms" faster (noise); throughput in % of the peer, "−16 %" is slower.
    const signed = (value: number, digits: number) => `${value < 0 ? "−" : "+"}${Math.abs(value).toFixed(digits)}`;
    const cost = unit === "ms" ? `${signed(after - before, 2)} ms` : `${signed(((after - before) / before) * 100, 0)} %`;
    console.log(`| ${label} | ${before.toFixed(2)} ${unit} | ${after.toFixed(2)} ${unit} | ${cost} |`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
