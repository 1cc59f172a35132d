/**
 * The browser's notebook connection (components/model) against the real
 * socket edge (server/socket + notebook hub) over real socket.io: text typed
 * while the server is down survives its restart, including cells the
 * restarted server no longer has. No browser and no kernel are involved.
 */
import assert from "node:assert/strict";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { Server } from "socket.io";
import { io as connect } from "socket.io-client";
import type { DraftStore, NotebookSocket } from "../../components/model/connection";
import { NotebookController } from "../../components/model/notebook-controller";
import { draftKey } from "../../components/model/pending-edits";
import { localHost } from "../../server/kernel/kernel-host";
import { createLogger } from "../../server/logger";
import { NotebookHub } from "../../server/notebook/notebook-hub";
import type { NotebookDocument } from "../../server/protocol/notebook-model";
import type { ClientToServerEvents, CommandAck, ServerToClientEvents } from "../../server/protocol/socket-api";
import { SOCKET_SERVER_OPTIONS, attachNotebookSocket, roomOf } from "../../server/socket/notebook-socket";

const LIMIT = { timeout: 30_000 };

/** The socket edge on a fixed loopback port, so it can be restarted where clients expect it. */
class EdgeServer {
  private constructor(
    readonly port: number,
    private readonly hub: NotebookHub,
    private readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
    private readonly http: HttpServer,
  ) {}

  static async start(port = 0): Promise<EdgeServer> {
    const http = createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, SOCKET_SERVER_OPTIONS);
    const hub = new NotebookHub({
      host: () => localHost(),
      broadcast: (notebookId, event, seq) => io.to(roomOf(notebookId)).emit("notebook:event", notebookId, event, seq),
    });
    attachNotebookSocket(io, hub, createLogger("silent"));
    await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
    return new EdgeServer((http.address() as AddressInfo).port, hub, io, http);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** What a fresh viewer gets when it opens the notebook. */
  async snapshot(notebookId: string): Promise<NotebookDocument> {
    const socket: NotebookSocket = connect(this.url, { transports: ["websocket"], forceNew: true });
    try {
      const ack = await new Promise<CommandAck>((resolve) => socket.emit("notebook:command", { op: "open", notebookId }, resolve));
      assert.ok(ack.ok && ack.notebook !== undefined, JSON.stringify(ack));
      return ack.notebook;
    } finally {
      socket.close();
    }
  }

  /** Drop every client connection (as a flaky network would), keeping the notebooks. */
  dropClients(): void {
    this.io.disconnectSockets(true);
  }

  /** Edit a cell as another viewer would. */
  async setSource(notebookId: string, cellId: string, source: string): Promise<void> {
    const socket: NotebookSocket = connect(this.url, { transports: ["websocket"], forceNew: true });
    try {
      for (const command of [
        { op: "open", notebookId },
        { op: "set-source", notebookId, cellId, source },
      ]) {
        const ack = await new Promise<CommandAck>((resolve) => socket.emit("notebook:command", command, resolve));
        assert.ok(ack.ok, JSON.stringify(ack));
      }
    } finally {
      socket.close();
    }
  }

  async close(): Promise<void> {
    await this.hub.shutdownAll();
    this.io.disconnectSockets(true);
    await new Promise<void>((resolve) => {
      void this.io.close(() => resolve());
    });
    this.http.closeAllConnections();
  }
}

class MemoryDrafts implements DraftStore {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

async function until(what: string, test: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function controllerFor(url: string, notebookId: string, drafts: DraftStore): NotebookController {
  return new NotebookController(notebookId, {
    schedule: (run) => setTimeout(run, 0),
    connection: {
      drafts,
      sourceDebounceMs: 30,
      createSocket: () =>
        connect(url, { transports: ["websocket"], forceNew: true, reconnectionDelay: 50, reconnectionDelayMax: 200, randomizationFactor: 0 }),
    },
  });
}

const cellsOf = (doc: NotebookDocument | null) => (doc?.cells ?? []).map((c) => [c.id, c.kind, c.source]);

describe("notebook connection across a server restart", () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("saves typed text, keeps what is typed while the server is down, and restores it after the restart", LIMIT, async () => {
    const notebookId = "reconnect-test";
    const first = await EdgeServer.start();
    const drafts = new MemoryDrafts();
    const page = controllerFor(first.url, notebookId, drafts);
    page.start();
    cleanup.push(() => page.stop());

    await until("the first snapshot", () => page.getState().connection.status === "connected" && page.getState().doc !== null);
    const firstCell = page.getState().doc?.cells[0]?.id;
    assert.ok(firstCell !== undefined);
    page.editSource(firstCell, "a = 1");
    await until("the edit to be acknowledged", () => page.getState().unsavedCells === 0);
    assert.equal((await first.snapshot(notebookId)).cells[0]?.source, "a = 1");
    await until("nothing to be kept locally once saved", () => drafts.getItem(draftKey(notebookId)) === null);

    await first.close();
    await until("the page to notice the outage", () => page.getState().connection.status === "reconnecting");

    page.editSource(firstCell, "a = 1\nb = 2  # typed offline");
    page.insertBelowSelected();
    const secondCell = page.getState().doc?.cells[1]?.id;
    assert.ok(secondCell !== undefined);
    page.editSource(secondCell, "c = 3  # new cell, offline");
    const shown = cellsOf(page.getState().doc);
    assert.equal(page.getState().unsavedCells, 2);
    await until("the draft to be written", () => drafts.getItem(draftKey(notebookId))?.includes("typed offline") === true);

    // The restarted server has lost the notebook: it recreates it with one empty cell.
    const second = await EdgeServer.start(first.port);
    cleanup.push(() => second.close());
    await until("reconnect and save", () => page.getState().connection.status === "connected" && page.getState().unsavedCells === 0);

    const server = await second.snapshot(notebookId);
    const page2Cells = cellsOf(page.getState().doc);
    assert.deepEqual(cellsOf(server), page2Cells, "the page and the server agree");
    for (const cell of shown) assert.ok(page2Cells.some((c) => c[0] === cell[0] && c[2] === cell[2]), `kept ${String(cell[2])}`);
    await until("the saved draft to be cleared", () => drafts.getItem(draftKey(notebookId)) === null);
  });

  it("after a dropped link, catches up on what another viewer changed meanwhile", LIMIT, async () => {
    const server = await EdgeServer.start();
    cleanup.push(() => server.close());
    const notebookId = "resume-test";
    const page = controllerFor(server.url, notebookId, new MemoryDrafts());
    page.start();
    cleanup.push(() => page.stop());
    await until("the first snapshot", () => page.getState().connection.status === "connected" && page.getState().doc !== null);
    const cellId = page.getState().doc?.cells[0]?.id;
    assert.ok(cellId !== undefined);

    server.dropClients();
    await until("the page to notice", () => page.getState().connection.status !== "connected");
    await server.setSource(notebookId, cellId, "changed while you were away");
    await until("the page to catch up", () => page.getState().doc?.cells[0]?.source === "changed while you were away");
    assert.equal(page.getState().connection.status, "connected");

    // Live events keep flowing in order after the catch-up.
    await server.setSource(notebookId, cellId, "and after");
    await until("a live event", () => page.getState().doc?.cells[0]?.source === "and after");
  });

  it("restores a draft left by a page that was closed during an outage", LIMIT, async () => {
    const server = await EdgeServer.start();
    cleanup.push(() => server.close());
    const notebookId = "draft-test";
    const drafts = new MemoryDrafts();
    const opened = await server.snapshot(notebookId);
    const cellId = opened.cells[0]?.id;
    assert.ok(cellId !== undefined);
    drafts.setItem(
      draftKey(notebookId),
      JSON.stringify({ version: 1, notebookId, savedAt: 0, edits: { [cellId]: { source: "print('kept')", rev: 7, kind: "code", index: 0 } } }),
    );

    const page = controllerFor(server.url, notebookId, drafts);
    page.start();
    cleanup.push(() => page.stop());
    await until("the draft to be saved", () => page.getState().connection.status === "connected" && page.getState().unsavedCells === 0);
    assert.equal(page.getState().doc?.cells[0]?.source, "print('kept')");
    assert.equal((await server.snapshot(notebookId)).cells[0]?.source, "print('kept')");
  });
});
