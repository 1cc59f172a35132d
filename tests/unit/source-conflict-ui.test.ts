/**
 * Two tabs editing one cell, through the real client model (controller,
 * connection, socket.io-client) against a minimal in-process server that
 * applies the protocol's `set-source` rule: an edit whose `baseHash` is not
 * the cell's current text is refused with a conflict unless `force`d.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Server } from "socket.io";
import { io as connect } from "socket.io-client";
import { NotebookController } from "../../components/notebook/model/notebook-controller";
import { newCell } from "../../server/core/notebook/notebook-state";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import {
  notebookCommandSchema,
  type ClientToServerEvents,
  type NotebookCommand,
  type NotebookEvent,
  type ServerToClientEvents,
} from "../../server/core/protocol/socket-api";
import type { NotebookAnswer, NotebookOp } from "../../server/core/protocol/ops-notebook";
import { sourceHash } from "../../server/core/protocol/source-hash";

const LIMIT = { timeout: 20_000 };

class ProtocolServer {
  readonly docs = new Map<string, NotebookDocument>();
  readonly received: Array<Extract<NotebookCommand, { op: "set-source" }>> = [];
  readonly ops: string[] = [];
  private readonly seqs = new Map<string, number>();
  ackDelayMs = 0;

  private constructor(
    readonly url: string,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
  ) {}

  static async start(): Promise<ProtocolServer> {
    const http = createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const server = new ProtocolServer(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, io);
    io.on("connection", (socket) => {
      socket.on("notebook:command", (raw, ack) => {
        const command = notebookCommandSchema.parse(raw);
        const reply = server.handle(command, socket.id);
        if (command.op === "open" && reply.ok) void socket.join(command.notebookId);
        setTimeout(() => ack(reply), command.op === "set-source" ? server.ackDelayMs : 0);
      });
    });
    return server;
  }

  add(id: string, source: string, ...more: string[]): void {
    const cells = [source, ...more].map((text, i) => newCell(`c${i + 1}`, "code", text));
    this.docs.set(id, { id, title: id, deleted: false, cells, kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } });
  }

  source(id: string): string | undefined {
    return this.docs.get(id)?.cells[0]?.source;
  }

  close(): Promise<void> {
    return new Promise((resolve) => void this.io.close(() => resolve()));
  }

  private handle(command: NotebookCommand, by: string): NotebookAnswer<NotebookOp> {
    this.ops.push(command.op);
    const doc = this.docs.get(command.notebookId);
    if (doc === undefined) return { ok: false, error: `notebook ${command.notebookId} not found`, code: "not-found" };
    if (command.op === "open") return { ok: true, notebook: structuredClone(doc), journal: { epoch: "e", seq: this.seqs.get(doc.id) ?? 0 } };
    if (command.op !== "set-source") return { ok: false, error: `${command.op} is not part of this test`, code: "invalid" };
    this.received.push(command);
    const cell = doc.cells.find((c) => c.id === command.cellId);
    if (cell === undefined) return { ok: false, error: "no such cell", code: "not-found" };
    const stale = command.baseHash !== undefined && command.baseHash !== sourceHash(cell.source) && cell.source !== command.source;
    if (stale && command.force !== true) {
      return { ok: false, error: "the cell was changed by someone else", code: "conflict", conflict: { cellId: cell.id, theirSource: cell.source } };
    }
    cell.source = command.source;
    this.broadcast(doc.id, { type: "cell-source", cellId: cell.id, source: command.source, by });
    return { ok: true };
  }

  private broadcast(id: string, event: NotebookEvent): void {
    const seq = (this.seqs.get(id) ?? 0) + 1;
    this.seqs.set(id, seq);
    this.io.to(id).emit("notebook:events", id, seq, [event]);
  }
}

async function until(what: string, test: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("two tabs on one cell", () => {
  let server: ProtocolServer;
  const pages: NotebookController[] = [];
  before(async () => {
    server = await ProtocolServer.start();
  });
  after(async () => {
    for (const page of pages) page.stop();
    await server.close();
  });

  async function open(notebookId: string, sourceDebounceMs = 20): Promise<NotebookController> {
    const page = new NotebookController(notebookId, {
      schedule: (run) => setTimeout(run, 0),
      connection: {
        drafts: null,
        sourceDebounceMs,
        createSocket: () => connect(server.url, { transports: ["websocket"], forceNew: true, reconnectionDelay: 50 }),
      },
    });
    pages.push(page);
    page.start();
    await until("the notebook", () => page.getState().doc !== null || page.getState().connection.status === "not-found");
    return page;
  }

  const text = (page: NotebookController) => page.getState().doc?.cells[0]?.source;

  it("tells its subscribers when a save lands, also when the shown document is otherwise unchanged", LIMIT, async () => {
    server.add("notify", "a");
    const page = await open("notify");
    const seen: string[] = [];
    const stop = page.subscribe(() => seen.push(page.getState().save.state));
    page.editSource("c1", "ab");
    await until("the save", () => page.getState().save.state === "saved" && server.source("notify") === "ab");
    await until("a subscriber to be told", () => seen.at(-1) === "saved");
    stop();
  });

  it("moving to another cell saves the one left behind at once, without waiting for a pause in typing", LIMIT, async () => {
    server.add("two-cells", "first", "second");
    const page = await open("two-cells", 60_000); // a pause that never comes within the test
    page.editSource("c1", "first, edited");
    assert.equal(server.source("two-cells"), "first", "still within the pause");
    page.editSource("c2", "typing here now");
    await until("c1 saved", () => server.source("two-cells") === "first, edited");
    assert.ok(!server.received.some((command) => command.cellId === "c2"), "the cell being typed in waits for its pause");
  });

  it("without a local edit, another tab's change simply shows, and editing on top of it saves", LIMIT, async () => {
    server.add("live", "x = 1");
    const a = await open("live");
    const b = await open("live");
    a.editSource("c1", "x = 2");
    await until("b to see a's edit", () => text(b) === "x = 2");
    b.editSource("c1", "x = 2\ny = 3");
    await until("b's edit to be saved", () => b.getState().save.state === "saved" && server.source("live") === "x = 2\ny = 3");
    await until("a to see it", () => text(a) === "x = 2\ny = 3");
    assert.deepEqual(a.getState().conflicts, {});
    assert.deepEqual(b.getState().conflicts, {});
    assert.equal(server.received.at(-1)?.baseHash, sourceHash("x = 2"), "b's edit was based on a's text");
  });

  async function collide(id: string): Promise<{ winner: NotebookController; loser: NotebookController }> {
    server.add(id, "start");
    const a = await open(id);
    const b = await open(id);
    // Both type before either has saved: both edits are based on "start".
    a.editSource("c1", "from a");
    b.editSource("c1", "from b");
    await until("one conflict", () => Object.keys(a.getState().conflicts).length + Object.keys(b.getState().conflicts).length === 1);
    return Object.keys(a.getState().conflicts).length === 1 ? { winner: b, loser: a } : { winner: a, loser: b };
  }

  it("the later edit is refused, not lost: the page keeps its text and asks; keep mine wins everywhere", LIMIT, async () => {
    const { winner, loser } = await collide("keep");
    const theirs = text(winner);
    const mine = text(loser);
    assert.equal(server.source("keep"), theirs);
    assert.deepEqual(loser.getState().conflicts, { c1: { theirSource: theirs } });
    assert.equal(loser.getState().save.state, "conflict");
    assert.equal(mine === "from a" || mine === "from b", true);
    assert.notEqual(mine, theirs);
    assert.equal(winner.getState().save.state, "saved");

    // Running it now would send its text with the run, past the conflict check: refused until the user chooses.
    const opsBefore = server.ops.length;
    loser.runCells(["c1"]);
    assert.equal(server.ops.length, opsBefore, "nothing sent");
    assert.match(loser.getState().notices.at(-1)?.message ?? "", /changed in another tab/);

    loser.resolveConflict("c1", "keep-mine");
    await until("mine saved", () => loser.getState().save.state === "saved");
    assert.equal(server.source("keep"), mine);
    assert.equal(server.received.at(-1)?.force, true);
    await until("the other tab to show it", () => text(winner) === mine);
    assert.deepEqual(loser.getState().conflicts, {});
  });

  it("use theirs drops the local edit and shows their text", LIMIT, async () => {
    const { winner, loser } = await collide("theirs");
    const theirs = text(winner);
    loser.resolveConflict("c1", "use-theirs");
    assert.equal(text(loser), theirs);
    assert.equal(loser.getState().save.state, "saved");
    assert.equal(loser.getState().unsavedCells, 0);
    // The next edit builds on their text and saves without a conflict.
    loser.editSource("c1", `${theirs}!`);
    await until("saved", () => server.source("theirs") === `${theirs}!`);
    assert.equal(server.received.at(-1)?.baseHash, sourceHash(theirs ?? ""));
  });

  it("keeps one save per cell in flight; text typed meanwhile follows, based on the first", LIMIT, async () => {
    server.add("serial", "");
    const page = await open("serial");
    server.ackDelayMs = 150;
    const before = server.received.length;
    page.editSource("c1", "a");
    await until("the first send", () => server.received.length === before + 1);
    page.editSource("c1", "ab");
    await until("both saved", () => page.getState().save.state === "saved", 3_000);
    server.ackDelayMs = 0;
    const sent = server.received.slice(before).map((c) => [c.source, c.baseHash]);
    assert.deepEqual(sent, [
      ["a", sourceHash("")],
      ["ab", sourceHash("a")],
    ]);
    assert.equal(server.source("serial"), "ab");
  });

  it("an unknown notebook is 'not found', with no reconnect loop", LIMIT, async () => {
    const page = await open("missing");
    const state = page.getState().connection;
    assert.equal(state.status, "not-found");
    assert.match(state.status === "not-found" ? state.reason : "", /not found/);
    page.setBrowserOnline(true);
    assert.equal(page.getState().connection.status, "not-found");
  });
});
