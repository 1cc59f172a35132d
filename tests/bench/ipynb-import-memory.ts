/**
 * Memory of the real server (server/main.ts) while it imports large .ipynb
 * files: RSS before, the peak during N concurrent imports of a ~50 MB
 * notebook, right after, and once idle; then how large the imported notebook
 * is when a viewer opens it. Not a test: nothing asserts.
 *
 *   npx tsx tests/bench/ipynb-import-memory.ts [--mb 50 --concurrent 4 --settle 20]
 */
import { readFileSync } from "node:fs";
import { LabServer } from "../helpers/lab-server";
import { labFetch } from "../helpers/lab-session";
import { connectClient } from "../helpers/socket-harness";
import { NOTEBOOK_IMPORT_PATH } from "../../server/core/protocol/socket-api";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

const MB = 1024 * 1024;

/** VmRSS of a process, in MiB. */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * A notebook like the ones that hurt: long training logs (tqdm bars with
 * block characters, so the text is not Latin-1), a large image, a large HTML
 * table. About `mb` MiB of JSON.
 */
function bigNotebook(mb: number, seed: number): string {
  const cells: unknown[] = [{ cell_type: "markdown", id: "intro", metadata: {}, source: ["# Imported log ", String(seed)] }];
  const image = "iVBORw0KGgo" + "A".repeat(Math.floor(mb * 0.12 * MB));
  cells.push({ cell_type: "code", id: "image", execution_count: 1, metadata: {}, source: ["plot()"], outputs: [{ output_type: "display_data", data: { "image/png": image, "text/plain": ["<Figure size 640x480 with 1 Axes>"] }, metadata: {} }] });
  const row = "<tr><td>0.1234</td><td>rank 0</td><td>step 12</td></tr>\n";
  const html = Array.from({ length: Math.floor((mb * 0.08 * MB) / (row.length + 10)) }, () => row);
  cells.push({ cell_type: "code", id: "table", execution_count: 2, metadata: {}, source: ["df"], outputs: [{ output_type: "execute_result", execution_count: 2, data: { "text/html": html, "text/plain": ["<DataFrame 100000 rows>"] }, metadata: {} }] });
  const line = (i: number) => `epoch ${i % 100} step ${i} loss ${(2 / (i + 1)).toFixed(6)} |${"█".repeat(i % 30)}${" ".repeat(30 - (i % 30))}| ${i}/100000\n`;
  const logCells = 10;
  // Bytes of one line in the file: UTF-8 of its JSON text, the indent and the comma.
  const lineBytes = Array.from({ length: 30 }, (_, i) => Buffer.byteLength(JSON.stringify(line(i)), "utf8") + 8).reduce((a, b) => a + b) / 30;
  const perCell = Math.floor((mb * 0.78 * MB) / logCells / lineBytes);
  for (let c = 0; c < logCells; c++) {
    const lines = Array.from({ length: perCell }, (_, i) => line(c * perCell + i));
    cells.push({ cell_type: "code", id: `train-${c}`, execution_count: 3 + c, metadata: {}, source: ["train()"], outputs: [{ output_type: "stream", name: "stdout", text: lines }] });
  }
  return JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { mgpulab: { title: `big ${seed}` } }, cells }, null, 1);
}

async function importOnce(url: string, body: string): Promise<{ id: string; notes: string[]; ms: number }> {
  const started = performance.now();
  // As the local admin (the session LabServer signed in with): imports need a signed-in member since accounts.
  const response = await labFetch(`${url}${NOTEBOOK_IMPORT_PATH}`, { method: "POST", body, headers: { "Content-Type": "application/x-ipynb+json", Origin: url } });
  const reply = (await response.json()) as { id?: string; notes?: string[]; error?: string };
  if (response.status !== 201 || !reply.id) throw new Error(`import failed: ${response.status} ${reply.error ?? ""}`);
  return { id: reply.id, notes: reply.notes ?? [], ms: performance.now() - started };
}

async function main(): Promise<void> {
  const mb = option("mb", 50);
  const concurrent = option("concurrent", 4);
  const settleSeconds = option("settle", 20);
  const bodies = Array.from({ length: concurrent }, (_, i) => bigNotebook(mb, i));
  const server = await LabServer.start();
  try {
    await importOnce(server.url, bigNotebook(0.05, 99)); // warm the route, zod, Prisma
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const baseline = rssOf(server.pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 20);
    const started = performance.now();
    const results = await Promise.all(bodies.map((body) => importOnce(server.url, body)));
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    const after = rssOf(server.pid);
    const timeline: string[] = [];
    for (let second = 5; second <= settleSeconds; second += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      timeline.push(`${second} s: ${rssOf(server.pid).toFixed(0)}`);
    }
    const settled = rssOf(server.pid);

    const client = await connectClient(server.url);
    const openStarted = performance.now();
    const opened = await client.send({ op: "open", notebookId: results[0]!.id });
    const openMs = performance.now() - openStarted;
    client.close();

    const fileMiB = Buffer.byteLength(bodies[0]!, "utf8") / MB;
    process.stdout.write(
      [
        `| ${concurrent} concurrent imports of a ${fileMiB.toFixed(1)} MiB .ipynb | |`,
        "|---|---|",
        `| RSS before | ${baseline.toFixed(0)} MiB |`,
        `| RSS peak during | ${peak.toFixed(0)} MiB |`,
        `| RSS right after | ${after.toFixed(0)} MiB |`,
        `| RSS after ${settleSeconds} s idle | ${settled.toFixed(0)} MiB |`,
        `| wall time, all imports | ${(wallMs / 1000).toFixed(1)} s |`,
        `| each import (ms) | ${results.map((r) => r.ms.toFixed(0)).join(", ")} |`,
        `| imported notebook as a viewer gets it | ${(JSON.stringify(opened).length / MB).toFixed(2)} MiB, open in ${openMs.toFixed(0)} ms |`,
        "",
        `RSS (MiB) while idle after: ${timeline.join(", ")}`,
        "",
        "import notes of the first file:",
        ...results[0]!.notes.map((note) => `  ${note}`),
        "",
      ].join("\n"),
    );
  } catch (error) {
    process.stderr.write(`${server.logs.slice(-20).join("\n")}\n`);
    throw error;
  } finally {
    await server.stop();
  }
}

void main();
