/** The socket.io edge with real kernels: commands, events to every viewer, and clear errors for bad input. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_SOURCE_CHARS } from "../../server/core/limits";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 60_000 };

describe("socket API", () => {
  let harness: SocketHarness;
  let alice: TestClient;
  let bob: TestClient;
  let nb1 = "";
  before(async () => {
    harness = await SocketHarness.start();
    nb1 = await harness.createNotebook();
    alice = await harness.client();
    bob = await harness.client();
  });
  after(async () => {
    alice.close();
    bob.close();
    await harness.close();
  });

  it("opens a notebook with a snapshot and runs a cell, streaming to every viewer", LIMIT, async () => {
    const opened = await alice.send({ op: "open", notebookId: nb1 });
    assert.ok(opened.ok && opened.notebook);
    assert.equal(opened.notebook.cells.length, 1);
    await bob.send({ op: "open", notebookId: nb1 });

    const insert = await alice.send({ op: "insert-cell", notebookId: nb1, index: 1, cell: { id: "c2", kind: "code", source: "" } });
    assert.deepEqual(insert, { ok: true });
    const ran = await alice.run(nb1, { c2: "print('hello')\n6 * 7" });
    assert.deepEqual(ran, { ok: true });

    for (const viewer of [alice, bob]) {
      const finished = await viewer.waitFor((event) => event.type === "cell-finished" && event.cellId === "c2");
      assert.equal(finished.type === "cell-finished" && finished.status, "ok");
      const streamed = viewer.events.filter((event) => event.type === "cell-stream" && event.cellId === "c2").map((event) => (event.type === "cell-stream" ? event.text : "")).join("");
      assert.equal(streamed, "hello\n");
      assert.ok(viewer.events.some((event) => event.type === "cell-output" && event.output.kind === "result" && event.output.data["text/plain"] === "42"));
      assert.ok(viewer.events.some((event) => event.type === "cell-source" && event.cellId === "c2"));
    }
  });

  it("gives a late viewer the outputs so far in its snapshot", LIMIT, async () => {
    const carol = await harness.client();
    try {
      const opened = await carol.send({ op: "open", notebookId: nb1 });
      assert.ok(opened.ok && opened.notebook);
      const cell = opened.notebook.cells.find((candidate) => candidate.id === "c2");
      assert.equal(cell?.source, "print('hello')\n6 * 7");
      assert.deepEqual(cell?.outputs.map((output) => output.kind), ["stream", "result"]);
      assert.ok(cell?.executionCount);
    } finally {
      carol.close();
    }
  });

  const badCommands: Array<[string, (notebookId: string) => unknown, RegExp]> = [
    ["not an object", () => "hello", /invalid command/],
    ["an unknown op", (nb) => ({ op: "format-disk", notebookId: nb }), /invalid command/],
    ["a hostile notebook id", () => ({ op: "open", notebookId: "../../etc/passwd" }), /notebookId: ids are letters/],
    ["a negative index", (nb) => ({ op: "insert-cell", notebookId: nb, index: -1, cell: { id: "x", kind: "code", source: "" } }), /index/],
    ["a source over the limit", (nb) => ({ op: "set-source", notebookId: nb, cellId: "c2", source: "x".repeat(MAX_SOURCE_CHARS + 1) }), /at most/],
    ["a wrong kind", (nb) => ({ op: "set-kind", notebookId: nb, cellId: "c2", kind: "sql" }), /kind/],
    ["a cell that does not exist", (nb) => ({ op: "delete-cell", notebookId: nb, cellId: "nope" }), /no cell nope/],
    ["a duplicate cell id", (nb) => ({ op: "insert-cell", notebookId: nb, index: 0, cell: { id: "c2", kind: "code", source: "" } }), /already exists/],
    ["a notebook that does not exist", () => ({ op: "execute", notebookId: "other", cellIds: ["c1"] }), /notebook other not found/],
  ];
  for (const [name, command, message] of badCommands) {
    it(`rejects ${name} with a clear error and changes nothing`, LIMIT, async () => {
      const before = (await alice.send({ op: "open", notebookId: nb1 }));
      const reply = await alice.send(command(nb1));
      assert.equal(reply.ok, false);
      assert.match(reply.ok ? "" : reply.error, message);
      const afterwards = await alice.send({ op: "open", notebookId: nb1 });
      assert.deepEqual(afterwards.ok && afterwards.notebook?.cells, before.ok && before.notebook?.cells);
    });
  }

  it("refuses to run a cell that is already running, and interrupts it", LIMIT, async () => {
    await alice.send({ op: "insert-cell", notebookId: nb1, index: 0, cell: { id: "loop", kind: "code", source: "print('go', flush=True)\nwhile True: pass" } });
    await alice.send({ op: "execute", notebookId: nb1, cellIds: ["loop"] });
    await alice.waitFor((event) => event.type === "cell-stream" && event.cellId === "loop");
    const again = await alice.send({ op: "execute", notebookId: nb1, cellIds: ["loop"] });
    assert.equal(again.ok, false);
    await bob.send({ op: "interrupt", notebookId: nb1 });
    const finished = await alice.waitFor((event) => event.type === "cell-finished" && event.cellId === "loop");
    assert.equal(finished.type === "cell-finished" && finished.status, "interrupted");
  });

  it("numbers events without gaps and replays exactly what a reconnecting viewer missed", LIMIT, async () => {
    const dave = await harness.client();
    const opened = await dave.send({ op: "open", notebookId: nb1 });
    assert.ok(opened.ok && opened.journal);
    const position = opened.journal;
    dave.close(); // offline while a cell runs

    await alice.send({ op: "insert-cell", notebookId: nb1, index: 0, cell: { id: "missed", kind: "code", source: "" } });
    await alice.run(nb1, { missed: "for i in range(3): print(i)\n'done'" });
    await alice.waitFor((event) => event.type === "cell-finished" && event.cellId === "missed");

    const back = await harness.client();
    try {
      const resumed = await back.send({ op: "open", notebookId: nb1, resume: position });
      assert.ok(resumed.ok && resumed.missed && resumed.journal);
      assert.equal(resumed.notebook, undefined, "a resumable viewer gets events, not a snapshot");
      const seqs = resumed.missed.map((entry) => entry.seq);
      assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => position.seq + 1 + i), "contiguous, starting right after what it had");
      assert.equal(resumed.journal.seq, position.seq + seqs.length);
      const text = resumed.missed.map(({ event }) => (event.type === "cell-stream" && event.cellId === "missed" ? event.text : "")).join("");
      assert.equal(text, "0\n1\n2\n");
      assert.ok(resumed.missed.some(({ event }) => event.type === "cell-finished" && event.cellId === "missed"));

      const stale = await back.send({ op: "open", notebookId: nb1, resume: { epoch: "another-server-life", seq: 1 } });
      assert.ok(stale.ok && stale.notebook, "an unknown epoch gets a full snapshot");
    } finally {
      back.close();
    }
    const live = alice.seqs;
    for (let i = 1; i < live.length; i++) assert.equal(live[i], live[i - 1]! + 1, "live events arrive in sequence");
  });
});
