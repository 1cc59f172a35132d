/** What a group commit leaves out because a later write of its batch stores it anyway (run-write-compaction.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compactRunWrites } from "../../server/persistence/run-write-compaction";
import type { RunWrite } from "../../server/persistence/run-writes";

const queuedAt = new Date("2026-11-27T10:00:00.000Z");
const startedAt = new Date("2026-11-27T10:00:00.005Z");
const heardAt = new Date("2026-11-27T10:00:00.006Z");
const endedAt = new Date("2026-11-27T10:00:00.007Z");
const base = { notebookId: "n", runId: "r", cellId: "c", source: "1+1", template: null };

const queued = (executionId = "e"): RunWrite => ({ kind: "execution-queued", runId: "r", executionId, cellId: "c", source: "1+1", template: null, at: queuedAt });
const started = (executionId = "e", queuedBefore = true): RunWrite => ({ kind: "execution-started", ...base, executionId, at: startedAt, queued: queuedBefore });
type Progress = Extract<RunWrite, { kind: "execution-progress" }>;
const progress = (executionId = "e", extra: Partial<Progress> = {}): Progress => ({
  kind: "execution-progress",
  notebookId: "n",
  runId: "r",
  executionId,
  cellId: "c",
  outputs: [{ kind: "result", executionCount: 1, data: { "text/plain": "2" } }],
  heardAt,
  ...extra,
});
const finished = (executionId = "e"): RunWrite => ({ kind: "execution-finished", notebookId: "n", executionId, cellId: "c", status: "ok", durationMs: 2, executionCount: 1, outputs: [], at: endedAt });
const position = (agentSeq: number, runId = "r"): RunWrite => ({ kind: "read-position", runId, agentSeq });

describe("compactRunWrites", () => {
  it("stores a trivial cell's whole life in one batch with one write per row", () => {
    const compacted = compactRunWrites([queued(), started(), progress(), position(3), finished(), position(5)]);
    assert.deepEqual(
      compacted.map((write) => write.kind),
      ["execution-started", "execution-progress", "execution-finished", "read-position"],
    );
    const [start, output, , last] = compacted;
    assert.deepEqual(start, { kind: "execution-started", ...base, executionId: "e", at: startedAt, queued: false, queuedAt, pointsCell: false }, "inserted as running, with when it was queued; the finish points the cell at it");
    assert.equal(output?.kind === "execution-progress" && output.heardAt, undefined, "when it was last heard from is not needed once it finished");
    assert.equal(output?.kind === "execution-progress" && output.outputs.length, 1, "its outputs are kept");
    assert.deepEqual(last, position(5), "the last read position only");
  });

  it("leaves alone what the batch does not finish or start", () => {
    const running = [queued("waiting"), started("e"), progress("e"), position(2)];
    assert.deepEqual(compactRunWrites(running), running, "a running execution is pointed at and heard from; a queued one stays queued");
    const startedEarlier = [progress("e"), finished("e")];
    assert.deepEqual(compactRunWrites([started("e", false), ...startedEarlier]).at(0), { ...started("e", false), pointsCell: false });
    const queuedEarlier = started("e", true);
    assert.deepEqual(compactRunWrites([queuedEarlier, progress("e")]), [queuedEarlier, progress("e")], "queued in an earlier batch: its row is marked running");
  });

  it("keeps a progress write that still stores something, and drops one that would store nothing", () => {
    const { heardAt: _heard, ...tailWithoutHeard } = progress("e", { outputs: [], liveTail: null });
    assert.deepEqual(compactRunWrites([progress("e", { outputs: [], liveTail: null }), finished()]).at(0), tailWithoutHeard, "a tail to clear is kept");
    assert.deepEqual(
      compactRunWrites([progress("e", { outputs: [] }), finished()]).map((write) => write.kind),
      ["execution-finished"],
    );
  });

  it("keeps one read position per run, and is the same list every time (a retried commit counts its writes by index)", () => {
    const batch = [position(1, "old"), position(2, "r"), position(3, "old"), finished(), position(4, "r")];
    assert.deepEqual(compactRunWrites(batch), [position(3, "old"), finished(), position(4, "r")]);
    assert.deepEqual(compactRunWrites(batch), compactRunWrites(batch));
  });
});
