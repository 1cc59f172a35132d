/**
 * Concurrent interactive transactions of the lab's real shape on PostgreSQL
 * (a throwaway cluster, tests/helpers/postgres.ts, with fsync on as in
 * production) for several pool sizes, and on SQLite for comparison: the
 * known issue is Prisma 7's pg adapter taking >50 ms per BEGIN/COMMIT under
 * concurrency (prisma/prisma#25811).
 *
 * Each of `--writers` concurrent writers stands for one running notebook:
 * its own notebook, run and execution, committing `--commits` times in a row
 * what the runtime commits while a cell streams — RunRepository.recordProgress
 * (claim seqs on the notebook row, insert 4 output records, set lastHeardAt),
 * in one interactive transaction. A second shape, an empty interactive
 * transaction (SELECT 1), isolates BEGIN/COMMIT. Prints a Markdown table of
 * p50/p99 per transaction and commits per second. Not a test: nothing asserts.
 *
 *   npm run bench:postgres -- [--writers 32 --commits 40 --pools 1,2,5,10,20,40]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { openDatabase, type Database, type DatabaseOptions } from "../../server/persistence/database";
import { NotebookRepository } from "../../server/persistence/notebook-repository";
import { RunRepository } from "../../server/persistence/run-repository";
import { LOCAL_USER, UserRepository } from "../../server/persistence/user-repository";
import { startPostgres } from "../helpers/postgres";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
}
const WRITERS = Number(option("writers", "32"));
const COMMITS = Number(option("commits", "40"));
const POOLS = option("pools", "1,2,5,10,20,40").split(",").map(Number);

type Shape = "output append" | "empty transaction";

interface Figures {
  p50: number;
  p99: number;
  perSecond: number;
}

const chunk = (writer: number, commit: number): CellOutput[] =>
  Array.from({ length: 4 }, (_, line) => ({ kind: "stream", name: "stdout", text: `writer ${writer} step ${commit}.${line}: loss=0.${commit}${line}\n` }));

/** One execution per writer, in its own notebook and run, as many notebooks streaming at once. */
async function executions(db: Database): Promise<string[]> {
  const owner = await new UserRepository(db.prisma).ensure(LOCAL_USER);
  const notebooks = new NotebookRepository(db.prisma);
  const runs = new RunRepository(db.prisma);
  const ids: string[] = [];
  for (let writer = 0; writer < WRITERS; writer++) {
    const notebook = await notebooks.create({ ownerId: owner.id, title: `writer ${writer}`, cells: [{ id: "c", kind: "code", source: "train()" }] });
    const run = await runs.start({ notebookId: notebook.id, host: "local", deviceMode: "bench" });
    const [execution] = await runs.queueExecutions(run.id, [{ cellId: "c", source: "train()" }]);
    await runs.startExecution(execution!);
    ids.push(execution!);
  }
  return ids;
}

async function measure(where: DatabaseOptions, shape: Shape): Promise<Figures> {
  const db = await openDatabase(where);
  try {
    const runs = new RunRepository(db.prisma);
    const ids = await executions(db);
    const commit = (writer: number, index: number): Promise<unknown> =>
      shape === "output append"
        ? runs.recordProgress(ids[writer]!, { outputs: chunk(writer, index), heardAt: new Date() })
        : db.prisma.$transaction((tx) => tx.$queryRaw`SELECT 1`);
    // Warm up: connections opened, statements planned.
    await Promise.all(ids.map((_, writer) => commit(writer, -1)));
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      ids.map(async (_, writer) => {
        for (let index = 0; index < COMMITS; index++) {
          const before = performance.now();
          await commit(writer, index);
          latencies.push(performance.now() - before);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    return { p50: at(0.5), p99: at(0.99), perSecond: latencies.length / seconds };
  } finally {
    await db.close();
  }
}

const row = (label: string, figures: Figures) => `| ${label} | ${figures.p50.toFixed(1)} ms | ${figures.p99.toFixed(1)} ms | ${Math.round(figures.perSecond).toLocaleString("en")} |`;

async function main(): Promise<void> {
  console.log(`${WRITERS} concurrent writers × ${COMMITS} commits each; ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}\n`);
  const server = await startPostgres({ durable: true });
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-tx-"));
  try {
    for (const shape of ["output append", "empty transaction"] as const) {
      console.log(`\n${shape}\n\n| database | p50 per transaction | p99 | transactions/s |\n| --- | ---: | ---: | ---: |`);
      console.log(row("SQLite (one connection, WAL, synchronous=NORMAL)", await measure({ dataDir: mkdtempSync(path.join(dir, "sqlite-")) }, shape)));
      for (const poolSize of POOLS) {
        const url = await server.createDatabase("bench");
        console.log(row(`PostgreSQL, pool ${poolSize}`, await measure({ url, poolSize }, shape)));
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
