/** Metric points in bulk, on SQLite and PostgreSQL: 200k points written in batches and read back exactly; replay by seq. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidDataError, NotFoundError } from "../../server/persistence/errors";
import type { MetricInput } from "../../server/persistence/types";
import { forEachDatabase, type TestDatabase } from "./persistence-harness";

/** Makes the database itself refuse a metric point of value 666 ("boom"), with a trigger; returns the undo. */
async function failInsertsOf666(): Promise<() => Promise<void>> {
  const run = (sql: string) => t.db.prisma.$executeRawUnsafe(sql);
  if (t.provider === "sqlite") {
    await run(`CREATE TRIGGER "test_boom" BEFORE INSERT ON "MetricPoint" WHEN NEW."value" = 666 BEGIN SELECT RAISE(ABORT, 'boom'); END`);
    return async () => void (await run(`DROP TRIGGER "test_boom"`));
  }
  await run(`CREATE FUNCTION test_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW."value" = 666 THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$`);
  await run(`CREATE TRIGGER "test_boom" BEFORE INSERT ON "MetricPoint" FOR EACH ROW EXECUTE FUNCTION test_boom()`);
  return async () => {
    await run(`DROP TRIGGER "test_boom" ON "MetricPoint"`);
    await run(`DROP FUNCTION test_boom()`);
  };
}

// Each half of forEachDatabase sets it for its own tests (the halves run one after the other).
let t: TestDatabase;

async function newRun() {
  const notebook = await t.notebooks.create({ ownerId: t.ownerId, title: "metrics" });
  return t.runs.start({ notebookId: notebook.id, host: "local", deviceMode: "4× cpu, DDP (gloo)" });
}

const NAMES = ["loss", "step_ms", "data_ms", "forward_ms", "backward_ms"] as const;
const valueOf = (rank: number, step: number, name: number) => (name === 0 && step % 997 === 0 ? null : rank * 1e6 + step + name / 10);

forEachDatabase((kind) => {
  before(async () => {
    t = await kind.create();
  });
  after(() => t.close());

  describe("MetricRepository", () => {
    it("writes 200,000 points in batches and reads every series back exactly", async () => {
      const run = await newRun();
      const ranks = 4;
      const steps = 10_000; // 4 ranks × 10,000 steps × 5 values = 200,000 points
      const batch: MetricInput[] = [];
      const started = performance.now();
      for (let step = 0; step < steps; step++) {
        for (let rank = 0; rank < ranks; rank++) {
          const values: Record<string, number | null> = {};
          NAMES.forEach((name, index) => (values[name] = valueOf(rank, step, index)));
          batch.push({ rank, step, values });
        }
        if (batch.length >= 2_000) await t.metrics.append(run.id, batch.splice(0));
      }
      if (batch.length > 0) await t.metrics.append(run.id, batch.splice(0));
      const seconds = (performance.now() - started) / 1000;
      const rate = Math.round(200_000 / seconds);
      // The rate is a benchmark's figure (tests/bench/persistence.ts, BENCHMARKS.md), not this test's: a loaded machine
      // must not fail a test of what is stored.
      console.log(`# metric insert: 200,000 points in ${seconds.toFixed(2)} s = ${rate.toLocaleString("en")} points/s`);

      const listed = await t.metrics.listSeries(run.id);
      assert.equal(listed.length, ranks * NAMES.length);
      assert.ok(listed.every((series) => series.points === steps));

      const readStarted = performance.now();
      const all = await t.metrics.series(run.id);
      console.log(`# metric read: 200,000 points in ${(performance.now() - readStarted).toFixed(0)} ms`);
      assert.equal(all.length, 20);
      for (const series of all) {
        const nameIndex = NAMES.indexOf(series.name as (typeof NAMES)[number]);
        assert.equal(series.step.length, steps);
        for (let step = 0; step < steps; step++) {
          assert.equal(series.step[step], step);
          assert.equal(series.value[step], valueOf(series.rank, step, nameIndex));
        }
        for (let i = 1; i < steps; i++) assert.ok(series.seq[i]! > series.seq[i - 1]!);
      }
      const loss = await t.metrics.series(run.id, { name: "loss", rank: 2 });
      assert.equal(loss.length, 1);
      assert.equal(loss[0]!.value[997], null, "a non-finite loss is stored as null");
    });

    it("replays metric messages after a seq as the kernel sent them, never cutting one in two", async () => {
      const run = await newRun();
      const first = await t.metrics.append(run.id, [
        { rank: 0, step: 0, values: { loss: 2, step_ms: 10 } },
        { rank: 1, step: 0, values: { loss: 2.5, step_ms: Number.NaN } },
        { tag: "ddp-4", rank: 0, step: 0, values: { loss: 3 } },
      ]);
      assert.deepEqual(first, { firstSeq: 1, lastSeq: 3 });
      await t.metrics.append(run.id, [{ rank: 0, step: 1, values: { loss: 1.5, step_ms: Number.POSITIVE_INFINITY } }]);
      assert.deepEqual(await t.metrics.since(run.id, 1), [
        { seq: 2, executionId: "", tag: "", rank: 1, step: 0, values: { loss: 2.5, step_ms: null } },
        { seq: 3, executionId: "", tag: "ddp-4", rank: 0, step: 0, values: { loss: 3 } },
        { seq: 4, executionId: "", tag: "", rank: 0, step: 1, values: { loss: 1.5, step_ms: null } },
      ]);
      // A limit of 3 points ends inside message 2 (2 values): only complete messages come back.
      const page = await t.metrics.since(run.id, 0, 3);
      assert.deepEqual(page.map((message) => message.seq), [1]);
      assert.deepEqual(Object.keys(page[0]!.values).sort(), ["loss", "step_ms"]);
    });

    it("refuses bad messages and unknown runs without writing, and a failed batch leaves no stale cache", async () => {
      const run = await newRun();
      const before_ = await t.counts();
      const bad: MetricInput[][] = [
        [{ rank: -1, step: 0, values: { loss: 1 } }],
        [{ rank: 0, step: 1.5, values: { loss: 1 } }],
        [{ rank: 0, step: 0, values: { "bad name!": 1 } }],
        [{ rank: 0, step: 0, values: { loss: "1" as unknown as number } }],
        [{ rank: 0, step: 0, values: { loss: 1 } }, { rank: 0, step: 0, tag: "x".repeat(65), values: { loss: 1 } }],
      ];
      for (const messages of bad) await assert.rejects(t.metrics.append(run.id, messages), InvalidDataError);
      await assert.rejects(t.metrics.append("no-such-run", [{ rank: 0, step: 0, values: { loss: 1 } }]), NotFoundError);
      assert.deepEqual(await t.counts(), before_);

      // A batch that creates a series and then fails rolls the series back; the next batch must not use its id.
      const restore = await failInsertsOf666();
      try {
        await assert.rejects(t.metrics.append(run.id, [{ rank: 0, step: 0, values: { fresh: 666 } }]), /boom/);
      } finally {
        await restore();
      }
      assert.deepEqual(await t.counts(), before_);
      await t.metrics.append(run.id, [{ rank: 0, step: 1, values: { fresh: 1 } }]);
      assert.deepEqual(await t.metrics.since(run.id, 0), [{ seq: 1, executionId: "", tag: "", rank: 0, step: 1, values: { fresh: 1 } }]);
    });
  });
});
