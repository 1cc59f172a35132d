/**
 * A notebook someone else shared, and a session that ends, through the real
 * client model (controller, connection, socket.io-client) against a minimal
 * in-process server: it answers `open` with the viewer's access, lists the
 * notebook with its owner, and can end the session or refuse the handshake.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Server } from "socket.io";
import { io as connect } from "socket.io-client";
import { accessBadge, mayDo } from "../../components/notebook/model/notebook-access";
import { NotebookController } from "../../components/notebook/model/notebook-controller";
import { pageSession } from "../../components/shell/model/session-ended";
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { newCell } from "../../server/core/notebook/notebook-state";
import { notebookCommandSchema, type ClientToServerEvents, type ServerToClientEvents } from "../../server/core/protocol/socket-api";

const LIMIT = { timeout: 20_000 };

class AccessServer {
  /** Notebook id → what the viewer may do with it. */
  readonly access = new Map<string, NotebookAccessLevel>();
  readonly ops: string[] = [];
  refuseHandshake = false;

  private constructor(
    readonly url: string,
    readonly io: Server<ClientToServerEvents, ServerToClientEvents>,
  ) {}

  static async start(): Promise<AccessServer> {
    const http = createServer();
    const io = new Server<ClientToServerEvents, ServerToClientEvents>(http);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const server = new AccessServer(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, io);
    io.use((_socket, next) => next(server.refuseHandshake ? new Error("unauthorized: sign in to use this lab") : undefined));
    io.on("connection", (socket) => {
      socket.on("notebook:command", (raw, ack) => {
        const command = notebookCommandSchema.parse(raw);
        server.ops.push(command.op);
        const access = server.access.get(command.notebookId) ?? "edit";
        if (command.op !== "open") return ack({ ok: true });
        const cells = [newCell("c1", "code", "print(1)"), newCell("c2", "markdown", "# notes")];
        ack({ ok: true, access, notebook: { id: command.notebookId, title: command.notebookId, deleted: false, cells, kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } }, journal: { epoch: "e", seq: 0 } });
      });
      socket.on("lab:command", (raw, ack) => {
        if (typeof raw === "object" && raw !== null && "op" in raw && raw.op === "list-notebooks") {
          const notebooks = [...server.access].map(([id, access]) => ({ id, title: id, owner: { id: "u-bob", name: "Bob" }, access, cellCount: 2, updatedAt: "2025-06-01T12:00:00Z", deletedAt: null }));
          return ack({ ok: true, notebooks });
        }
        ack({ ok: false, error: "not part of this test", code: "invalid" });
      });
    });
    return server;
  }

  close(): Promise<void> {
    return new Promise((resolve) => void this.io.close(() => resolve()));
  }
}

async function until(what: string, test: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("what the notebook page offers", () => {
  it("offers nothing before the server said, everything to the owner, the kernel to a runner, nothing to a reader", () => {
    const levels: Array<NotebookAccessLevel | null> = [null, "read", "run", "edit"];
    assert.deepEqual(levels.map((a) => [mayDo(a, "run"), mayDo(a, "edit")]), [
      [false, false],
      [false, false],
      [true, false],
      [true, true],
    ]);
    assert.equal(accessBadge("read", "Bob"), "Read only — shared by Bob");
    assert.equal(accessBadge("run", "Bob"), "Can run — shared by Bob");
    assert.equal(accessBadge("run", null), "Can run — shared with you");
    assert.equal(accessBadge("edit", "Ada"), null);
  });
});

describe("a shared notebook and a session that ends", () => {
  let server: AccessServer;
  const pages: NotebookController[] = [];
  before(async () => {
    server = await AccessServer.start();
  });
  after(async () => {
    for (const page of pages) page.stop();
    await server.close();
  });

  async function open(notebookId: string): Promise<NotebookController> {
    const page = new NotebookController(notebookId, {
      schedule: (run) => setTimeout(run, 0),
      connection: { drafts: null, sourceDebounceMs: 10, createSocket: () => connect(server.url, { transports: ["websocket"], forceNew: true, reconnectionDelay: 50 }) },
    });
    pages.push(page);
    page.start();
    await until("the notebook", () => page.getState().doc !== null || page.getState().connection.status === "signed-out");
    return page;
  }

  it("a reader sees the owner's name, and edits, inserts and runs are dropped with a notice", LIMIT, async () => {
    server.access.set("read-nb", "read");
    const page = await open("read-nb");
    assert.equal(page.getState().access, "read");
    await until("the owner's name", () => page.getState().owner === "Bob");
    const before = server.ops.length;
    page.editSource("c1", "print(2)");
    page.insertBelowSelected();
    page.runAll();
    page.selectCell("c1");
    page.handleKey({ key: "b", shift: false, ctrl: false, alt: false, meta: false, at: 0 });
    assert.equal(page.getState().doc?.cells.length, 2);
    assert.equal(page.getState().doc?.cells[0]?.source, "print(1)");
    assert.equal(page.getState().ui.selectedId, "c1", "a refused key keeps the selection");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(server.ops.slice(before), [], "nothing was sent");
    assert.ok(page.getState().notices.some((n) => n.message.includes("cannot be changed")));
  });

  it("a runner may run, interrupt and restart, but not edit", LIMIT, async () => {
    server.access.set("run-nb", "run");
    const page = await open("run-nb");
    assert.equal(page.getState().access, "run");
    const before = server.ops.length;
    page.editSource("c1", "print(2)");
    page.runAll();
    page.interrupt();
    page.restart();
    await until("the kernel commands", () => server.ops.length - before >= 3);
    assert.deepEqual(server.ops.slice(before).sort(), ["execute", "interrupt", "restart"], "no set-source");
  });

  it("the owner (or a server that says nothing of access) may do everything", LIMIT, async () => {
    const page = await open("own-nb");
    assert.equal(page.getState().access, "edit");
    assert.equal(page.getState().owner, null);
    page.editSource("c1", "print(3)");
    await until("the save", () => server.ops.includes("set-source"));
  });

  it("stops for good when the server ends the session, and the page's banner learns why", LIMIT, async () => {
    const page = await open("ending");
    server.io.emit("session:ended", "removed");
    server.io.disconnectSockets(true);
    await until("signed out", () => page.getState().connection.status === "signed-out");
    const state = page.getState().connection;
    assert.equal(state.status === "signed-out" ? state.reason : "", "an admin removed your account");
    assert.equal(pageSession.getState(), "removed");
    page.setBrowserOnline(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(page.getState().connection.status, "signed-out", "no reconnecting");
  });

  it("stops when the handshake is refused for want of a session", LIMIT, async () => {
    server.refuseHandshake = true;
    try {
      const page = await open("refused");
      assert.equal(page.getState().connection.status, "signed-out");
      assert.equal(page.getState().doc, null);
    } finally {
      server.refuseHandshake = false;
    }
  });
});
