/**
 * The notebook list's model against an in-memory lab that answers
 * `lab:command` as the protocol says (the server is faked, the model is real).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LabTransport } from "../../components/shell/model/lab-client";
import { importNotebook, importNotesKey, takeImportNotes } from "../../components/shell/model/lab-client";
import { NotebookListController, splitShared } from "../../components/notebooks/model/notebook-list";
import type { Me } from "../../server/core/protocol/accounts-model";
import type { NotebookListItem } from "../../server/core/protocol/notebook-model";
import type { LabCommand } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import { labCommandSchema } from "../../server/core/protocol/socket-api";

function member(name: string, role: Me["role"] = "member"): Me {
  const participant = role === "participant";
  return {
    id: `u-${name.toLowerCase()}`,
    name,
    email: participant ? null : `${name.toLowerCase()}@lab.test`,
    role,
    workshopId: participant ? "ws-1" : null,
    sessionExpiresAt: "2025-06-08T12:00:00Z",
    can: { createNotebooks: !participant, manageUsers: role === "admin", runWorkshops: role === "facilitator", seeHosts: !participant },
  };
}

class MemoryLab implements LabTransport {
  readonly notebooks = new Map<string, NotebookListItem>();
  private clock = Date.parse("2025-06-01T12:00:00Z");
  private next = 1;
  private connectListener: (() => void) | null = null;
  refuse: string | null = null;
  me: Me = member("Ada");

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    labCommandSchema.parse(command);
    return Promise.resolve(this.answer(command));
  }

  onConnect(listener: () => void): void {
    this.connectListener = listener;
  }

  reconnect(): void {
    this.connectListener?.();
  }

  close(): void {}

  private answer(command: LabCommand): LabAnswer<LabOp> {
    if (this.refuse !== null && command.op !== "list-notebooks") return { ok: false, error: this.refuse, code: "internal" };
    this.clock += 60_000;
    const now = new Date(this.clock).toISOString();
    const get = (id: string) => this.notebooks.get(id);
    switch (command.op) {
      case "list-notebooks": {
        const wanted = command.state ?? "active";
        return { ok: true, notebooks: [...this.notebooks.values()].filter((n) => (n.deletedAt === null) === (wanted === "active")) };
      }
      case "create-notebook":
        return { ok: true, notebook: this.add(command.title ?? "Untitled", 1, now) };
      case "duplicate-notebook": {
        const source = get(command.notebookId);
        return source ? { ok: true, notebook: this.add(`${source.title} (copy)`, source.cellCount, now) } : { ok: false, error: "not found", code: "not-found" };
      }
      case "rename-notebook":
      case "delete-notebook":
      case "restore-notebook": {
        const item = get(command.notebookId);
        if (!item) return { ok: false, error: `notebook ${command.notebookId} not found`, code: "not-found" };
        const changed =
          command.op === "rename-notebook"
            ? { ...item, title: command.title, updatedAt: now }
            : { ...item, deletedAt: command.op === "delete-notebook" ? now : null };
        this.notebooks.set(item.id, changed);
        return { ok: true, notebook: changed };
      }
      case "list-scenarios":
        return { ok: true, scenarios: [] };
      case "create-from-scenario":
        return { ok: true, notebook: this.add(command.scenarioId, 10, now) };
      case "find-scenario-copy":
        return { ok: true, freshTitle: command.scenarioId };
      case "whoami":
        return { ok: true, me: this.me };
      case "list-kernels":
      case "shutdown-kernel":
      case "shutdown-all-kernels":
      case "list-hosts":
      case "check-host":
        return { ok: false, error: "this memory lab runs no kernels", code: "unavailable" };
      default:
        return { ok: false, error: `the memory lab does not answer ${command.op}`, code: "unavailable" };
    }
  }

  private add(title: string, cellCount: number, now: string): NotebookListItem {
    const item: NotebookListItem = { id: `nb-${this.next++}`, title, owner: { id: this.me.id, name: this.me.name }, access: "edit", cellCount, updatedAt: now, deletedAt: null };
    this.notebooks.set(item.id, item);
    return item;
  }
}

async function loaded(lab: MemoryLab, undoMs = 60_000): Promise<NotebookListController> {
  const list = new NotebookListController(lab, { undoMs });
  list.start();
  await list.refresh();
  return list;
}

const titles = (items: readonly NotebookListItem[]) => items.map((n) => n.title);

describe("notebook list", () => {
  it("creates notebooks and lists the newest change first", async () => {
    const lab = new MemoryLab();
    const list = await loaded(lab);
    assert.equal(list.getState().status, "ready");
    const first = await list.create("  First  ");
    await list.create("Second");
    await list.refresh();
    assert.equal(first, "nb-1");
    assert.deepEqual(titles(list.getState().active), ["Second", "First"]);
    list.stop();
  });

  it("renames in place at once and keeps the server's answer", async () => {
    const lab = new MemoryLab();
    const list = await loaded(lab);
    const id = await list.create("Old");
    await list.refresh();
    const renaming = list.rename(id!, "New");
    assert.deepEqual(titles(list.getState().active), ["New"], "shown before the server answers");
    assert.equal(await renaming, true);
    assert.equal(lab.notebooks.get(id!)?.title, "New");
    list.stop();
  });

  it("deletes with an undo toast; undo restores it and the toast goes", async () => {
    const lab = new MemoryLab();
    const list = await loaded(lab);
    const id = (await list.create("Precious"))!;
    await list.create("Other");
    await list.refresh();
    assert.equal(await list.remove(id), true);
    assert.deepEqual(list.getState().undo, { notebookId: id, title: "Precious" });
    assert.deepEqual(titles(list.getState().active), ["Other"]);
    assert.deepEqual(titles(list.getState().deleted), ["Precious"]);
    assert.equal(await list.undoDelete(), true);
    assert.equal(list.getState().undo, null);
    assert.deepEqual(titles(list.getState().active).sort(), ["Other", "Precious"]);
    assert.deepEqual(list.getState().deleted, []);
    list.stop();
  });

  it("the undo toast goes away by itself", async () => {
    const list = await loaded(new MemoryLab(), 20);
    const id = (await list.create("Brief"))!;
    await list.remove(id);
    assert.notEqual(list.getState().undo, null);
    await new Promise<void>((resolve) => {
      const unsubscribe = list.subscribe(() => {
        if (list.getState().undo === null) {
          unsubscribe();
          resolve();
        }
      });
    });
    assert.deepEqual(titles(list.getState().deleted), ["Brief"], "still restorable from Recently deleted");
    list.stop();
  });

  it("duplicates and restores from Recently deleted", async () => {
    const lab = new MemoryLab();
    const list = await loaded(lab);
    const id = (await list.create("Base"))!;
    assert.equal(await list.duplicate(id), "nb-2");
    await list.remove(id);
    await list.restore(id);
    assert.deepEqual(titles(list.getState().active).sort(), ["Base", "Base (copy)"]);
    list.stop();
  });

  it("shows a refusal once, as the server worded it, and reloads after a reconnect", async () => {
    const lab = new MemoryLab();
    const list = await loaded(lab);
    lab.refuse = "the database is read-only";
    assert.equal(await list.create("x"), null);
    assert.equal(list.getState().error, "Creating the notebook failed: the database is read-only");
    list.dismissError();
    assert.equal(list.getState().error, null);
    lab.refuse = null;
    lab.notebooks.set("nb-x", { id: "nb-x", title: "From elsewhere", owner: { id: "u-ada", name: "Ada" }, access: "edit", cellCount: 3, updatedAt: new Date().toISOString(), deletedAt: null });
    const reloaded = new Promise<void>((resolve) => {
      const unsubscribe = list.subscribe(() => {
        if (list.getState().active.length === 1) {
          unsubscribe();
          resolve();
        }
      });
    });
    lab.reconnect();
    await reloaded;
    list.stop();
  });
});

describe("notebook list: accounts", () => {
  it("knows who is signed in, so a participant is offered no new notebook", async () => {
    const lab = new MemoryLab();
    lab.me = member("Pia", "participant");
    const list = await loaded(lab);
    await list.loadMe();
    assert.equal(list.getState().me?.name, "Pia");
    assert.equal(list.getState().me?.can.createNotebooks, false);
    list.stop();
  });

  it("lists notebooks others shared apart from the user's own, with their owner", () => {
    const at = "2025-06-01T12:00:00Z";
    const item = (id: string, access: NotebookListItem["access"], owner: string): NotebookListItem => ({
      id,
      title: id,
      owner: { id: `u-${owner}`, name: owner },
      access,
      cellCount: 1,
      updatedAt: at,
      deletedAt: null,
    });
    const { own, shared } = splitShared([item("mine", "edit", "Ada"), item("theirs", "read", "Bob"), item("runnable", "run", "Cy")]);
    assert.deepEqual(own.map((n) => n.id), ["mine"]);
    assert.deepEqual(shared.map((n) => [n.id, n.owner.name, n.access]), [["theirs", "Bob", "read"], ["runnable", "Cy", "run"]]);
  });
});

describe("importNotebook", () => {
  const respond = (status: number, body: string): typeof fetch => {
    return (input, init) => {
      assert.equal(init?.method, "POST");
      assert.equal(String(input), "/api/notebooks/import?title=My%20run");
      assert.equal(init?.body, "{raw}");
      return Promise.resolve(new Response(body, { status }));
    };
  };

  it("returns the new id on 201, with the import's notes", async () => {
    assert.deepEqual(await importNotebook("{raw}", "My run.ipynb", respond(201, '{"id":"nb-9"}')), { ok: true, id: "nb-9", notes: [] });
    assert.deepEqual(await importNotebook("{raw}", "My run.ipynb", respond(201, '{"id":"nb-9","notes":["cells[0]: cut"]}')), { ok: true, id: "nb-9", notes: ["cells[0]: cut"] });
  });

  it("hands the notes to the notebook page once, and ignores unreadable ones", () => {
    const store = new Map<string, string>();
    const storage = { getItem: (key: string) => store.get(key) ?? null, removeItem: (key: string) => void store.delete(key) };
    store.set(importNotesKey("nb-9"), JSON.stringify(["cells[0]: imported detached"]));
    assert.deepEqual(takeImportNotes(storage, "nb-9"), ["cells[0]: imported detached"]);
    assert.equal(takeImportNotes(storage, "nb-9"), null, "read once");
    store.set(importNotesKey("nb-9"), "{not json");
    assert.equal(takeImportNotes(storage, "nb-9"), null);
    assert.equal(store.size, 0);
  });

  it("passes the server's reason on 400, and says what it got otherwise", async () => {
    assert.deepEqual(await importNotebook("{raw}", "My run.ipynb", respond(400, '{"error":"not a notebook: nbformat 3 is not supported"}')), {
      ok: false,
      error: "not a notebook: nbformat 3 is not supported",
    });
    const odd = await importNotebook("{raw}", "My run.ipynb", respond(502, "<html>bad gateway</html>"));
    assert.equal(odd.ok, false);
    assert.match(odd.ok ? "" : odd.error, /502/);
  });

  it("reports an unreachable server", async () => {
    const down: typeof fetch = () => Promise.reject(new TypeError("Failed to fetch"));
    assert.deepEqual(await importNotebook("{raw}", "My run.ipynb", down), { ok: false, error: "could not reach the server (Failed to fetch)" });
  });
});
