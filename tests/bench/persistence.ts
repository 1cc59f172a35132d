/**
 * Benchmark of the persistence layer on a real SQLite file: opening a
 * 2,000-cell notebook (parse .ipynb, import, load, save, export) and the
 * metric insert rate (points/s) of the repository's batched raw INSERTs next
 * to Prisma's createMany. Prints a Markdown table. Not a test: nothing asserts.
 *
 *   npx tsx tests/bench/persistence.ts [--cells 2000 --points 500000 --batch 2000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import path from "node:path";
import { toIpynb } from "../../server/ipynb/export";
import { importIpynb, parseIpynb } from "../../server/ipynb/import";
import { openDatabase } from "../../server/persistence/database";
import { MetricRepository } from "../../server/persistence/metric-repository";
import { NotebookRepository } from "../../server/persistence/notebook-repository";
import { RunRepository } from "../../server/persistence/run-repository";
import type { CellInput, MetricInput } from "../../server/persistence/types";
import { LOCAL_USER, UserRepository } from "../../server/persistence/user-repository";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

async function timed<T>(body: () => Promise<T> | T): Promise<[T, number]> {
  const started = performance.now();
  const result = await body();
  return [result, performance.now() - started];
}

function notebookCells(count: number): CellInput[] {
  return Array.from({ length: count }, (_, i): CellInput =>
    i % 4 === 0
      ? { id: `md-${i}`, kind: "markdown", source: `## Step ${i}\n\nPredict first: what will the loss be?` }
      : {
          id: `code-${i}`,
          kind: "code",
          source: `loss = train(devices=${i % 8}, batch=64)\nprint(loss)\n`.repeat(3),
          outputs: [
            { kind: "stream", name: "stdout", text: "step 0 loss 2.30\n".repeat(20) },
            { kind: "result", executionCount: i, data: { "text/plain": `{'loss': ${i / 1000}}` } },
          ],
          executionCount: i,
          lastRun: { status: "ok", durationMs: 120 },
          template: i % 8 === 1 ? { id: "ddp/steps", parameters: { devices: 4, lr: 0.01 }, detached: false, fields: [], question: null } : null,
        },
  );
}

function metricBatch(firstStep: number, steps: number, ranks: number): MetricInput[] {
  const batch: MetricInput[] = [];
  for (let step = firstStep; step < firstStep + steps; step++) {
    for (let rank = 0; rank < ranks; rank++) {
      batch.push({ rank, step, values: { loss: 2 / (step + 1), step_ms: 10 + rank, data_ms: 1, forward_ms: 3, backward_ms: 5 } });
    }
  }
  return batch;
}

async function main(): Promise<void> {
  const cellCount = option("cells", 2000);
  const totalPoints = option("points", 500_000);
  const batchPoints = option("batch", 10_000);
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-"));
  const rows: Array<[string, string]> = [];
  try {
    const [db, openMs] = await timed(() => openDatabase({ dataDir: dir }));
    rows.push(["open + migrate an empty database", `${openMs.toFixed(0)} ms`]);
    const owner = await new UserRepository(db.prisma).ensure(LOCAL_USER);
    const notebooks = new NotebookRepository(db.prisma);

    const file = toIpynb({ title: "bench", cells: notebookCells(cellCount).map((cell) => ({ outputs: [], executionCount: null, lastRun: null, template: null, ...cell })) });
    const [, parseMs] = await timed(() => parseIpynb(file));
    rows.push([`parse + validate a ${cellCount.toLocaleString("en")}-cell .ipynb (${(file.length / 1024 / 1024).toFixed(1)} MB)`, `${parseMs.toFixed(0)} ms`]);
    const [imported, importMs] = await timed(() => importIpynb(notebooks, file, { ownerId: owner.id, title: "bench" }));
    rows.push([`import it (parse + one transaction), first in the process`, `${importMs.toFixed(0)} ms`]);
    const [, warmImportMs] = await timed(() => importIpynb(notebooks, file, { ownerId: owner.id, title: "bench again" }));
    rows.push([`import it again (warm)`, `${warmImportMs.toFixed(0)} ms`]);
    const [loaded, loadMs] = await timed(() => notebooks.load(imported.notebook.id));
    rows.push([`open it (load ${loaded.cells.length.toLocaleString("en")} cells)`, `${loadMs.toFixed(0)} ms`]);
    const edited = loaded.cells.map((cell, i) => (i === 1000 ? { ...cell, source: "edited" } : cell));
    const [, saveMs] = await timed(() => notebooks.saveCells(loaded.id, loaded.version, edited));
    rows.push([`saveCells with one cell changed`, `${saveMs.toFixed(0)} ms`]);
    const [, insertMs] = await timed(() => notebooks.insertCell(loaded.id, loaded.version + 1, 1000, { id: "inserted", kind: "code", source: "" }));
    rows.push([`insertCell in the middle`, `${insertMs.toFixed(1)} ms`]);
    const [, exportMs] = await timed(async () => toIpynb(await notebooks.load(loaded.id)));
    rows.push([`export it (load + .ipynb)`, `${exportMs.toFixed(0)} ms`]);

    const runs = new RunRepository(db.prisma);
    const metrics = new MetricRepository(db.prisma);
    const ranks = 4;
    const valuesPerMessage = 5;
    const stepsPerBatch = Math.max(1, Math.floor(batchPoints / (ranks * valuesPerMessage)));
    const batches = Math.ceil(totalPoints / (stepsPerBatch * ranks * valuesPerMessage));
    const points = batches * stepsPerBatch * ranks * valuesPerMessage;

    const run = await runs.start({ notebookId: loaded.id, host: "local", deviceMode: "4× cpu" });
    const [, rawMs] = await timed(async () => {
      for (let b = 0; b < batches; b++) await metrics.append(run.id, metricBatch(b * stepsPerBatch, stepsPerBatch, ranks));
    });
    rows.push([`metric insert, repository (raw multi-row INSERT), ${points.toLocaleString("en")} points in batches of ${(stepsPerBatch * ranks * valuesPerMessage).toLocaleString("en")}`, `${Math.round(points / (rawMs / 1000)).toLocaleString("en")} points/s`]);
    const [series, readMs] = await timed(() => metrics.series(run.id, { name: "loss" }));
    const readPoints = series.reduce((sum, entry) => sum + entry.step.length, 0);
    rows.push([`read one metric of one run (${readPoints.toLocaleString("en")} points, ${series.length} ranks)`, `${readMs.toFixed(0)} ms`]);

    // The same points through Prisma's createMany, for comparison.
    const run2 = await runs.start({ notebookId: loaded.id, host: "local", deviceMode: "4× cpu" });
    await db.prisma.metricSeries.createMany({ data: ["loss", "step_ms", "data_ms", "forward_ms", "backward_ms"].flatMap((name) => Array.from({ length: ranks }, (_, rank) => ({ runId: run2.id, tag: "", name, rank }))) });
    const seriesIds = new Map((await db.prisma.metricSeries.findMany({ where: { runId: run2.id }, select: { id: true, name: true, rank: true } })).map((row) => [`${row.name}/${row.rank}`, row.id]));
    let seq = 0;
    const comparedBatches = Math.max(1, Math.floor(batches / 5));
    const comparedPoints = comparedBatches * stepsPerBatch * ranks * valuesPerMessage;
    const [, createManyMs] = await timed(async () => {
      for (let b = 0; b < comparedBatches; b++) {
        const data = metricBatch(b * stepsPerBatch, stepsPerBatch, ranks).flatMap((message) => {
          seq++;
          return Object.entries(message.values).map(([name, value]) => ({ seriesId: seriesIds.get(`${name}/${message.rank}`)!, seq, step: message.step, value }));
        });
        await db.prisma.$transaction(async (tx) => {
          for (let i = 0; i < data.length; i += 2000) await tx.metricPoint.createMany({ data: data.slice(i, i + 2000) });
        });
      }
    });
    rows.push([`metric insert, Prisma createMany (${comparedPoints.toLocaleString("en")} points, same batches, for comparison)`, `${Math.round(comparedPoints / (createManyMs / 1000)).toLocaleString("en")} points/s`]);

    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nPersistence benchmark — SQLite (better-sqlite3, WAL), Node ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? "cpu"}\n`);
  console.log("| measure | result |");
  console.log("|---|---|");
  for (const [what, value] of rows) console.log(`| ${what} | ${value} |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
