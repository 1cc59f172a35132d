/**
 * The landing page's notebook list: what the server has (active and
 * recently deleted), and the intents the page offers (create, rename,
 * duplicate, delete with undo, restore, import). Components read the state
 * through `subscribe`/`getState`; every server answer goes through here, and
 * a refusal becomes one message the page shows.
 */
import type { Me } from "../../../server/core/protocol/accounts-model";
import type { NotebookListItem } from "../../../server/core/protocol/notebook-model";
import type { LabOp, LabReply, LabSend } from "../../../server/core/protocol/ops-lab";
import type { Refusal } from "../../../server/core/protocol/op-table";
import { importNotebook, type ImportResult, type LabTransport } from "../../shell/model/lab-client";
import { PolledPage } from "../../shell/model/polling-store";

export interface UndoOffer {
  notebookId: string;
  title: string;
}

export interface NotebookListState {
  status: "loading" | "ready" | "error";
  /** Newest change first. */
  active: readonly NotebookListItem[];
  /** Most recently deleted first. */
  deleted: readonly NotebookListItem[];
  /** The last thing that went wrong, for the page to show until dismissed. */
  error: string | null;
  /** Just deleted: the toast offering to undo it. */
  undo: UndoOffer | null;
  /** Who is signed in (what the page offers them); null until the server said. */
  me: Me | null;
}

export interface NotebookListOptions {
  /** How long the undo toast stays (ms). */
  undoMs?: number;
  importer?: (text: string, fileName: string) => Promise<ImportResult>;
}

/** Both lists, or the first refusal. */
type Lists = { ok: true; active: NotebookListItem[]; deleted: NotebookListItem[] };

export class NotebookListController extends PolledPage<NotebookListState, Lists> {
  private undoTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly undoMs: number;
  private readonly importer: (text: string, fileName: string) => Promise<ImportResult>;

  constructor(
    private readonly transport: LabTransport,
    options: NotebookListOptions = {},
  ) {
    super(
      transport,
      { status: "loading", active: [], deleted: [], error: null, undo: null, me: null },
      {
        what: "Loading the notebooks",
        failed: (error) => `Could not load the notebooks: ${error}`,
        fetch: () => fetchLists(transport),
        apply: (lists) => ({ active: sortActive(lists.active), deleted: sortDeleted(lists.deleted) }),
      },
    );
    this.undoMs = options.undoMs ?? 10_000;
    this.importer = options.importer ?? ((text, fileName) => importNotebook(text, fileName));
  }

  /** Lists and who is signed in, now and after every reconnect (one listener: a transport may keep only one). */
  override start(): void {
    this.transport.onConnect(() => {
      void this.refresh();
      void this.loadMe();
    });
    void this.refresh();
    void this.loadMe();
  }

  /** Who is signed in: a participant is offered no "New notebook" or import. A failure keeps what was known. */
  async loadMe(): Promise<void> {
    const ack = await this.transport.send({ op: "whoami" });
    if (ack.ok) this.update({ me: ack.me });
  }

  override stop(): void {
    if (this.undoTimer !== null) clearTimeout(this.undoTimer);
    super.stop();
  }

  /** A new notebook with this title ("Untitled", numbered, without one); its id, or null (the reason is shown). */
  async create(title?: string): Promise<string | null> {
    const ack = await this.command(title === undefined ? { op: "create-notebook" } : { op: "create-notebook", title: title.trim() }, "Creating the notebook");
    return ack === null ? null : ack.notebook.id;
  }

  async rename(notebookId: string, title: string): Promise<boolean> {
    const trimmed = title.trim();
    const current = this.state.active.find((n) => n.id === notebookId);
    if (trimmed === "" || current?.title === trimmed) return trimmed !== "";
    if (current !== undefined) this.update({ active: replaceItem(this.state.active, { ...current, title: trimmed }) });
    const ack = await this.command({ op: "rename-notebook", notebookId, title: trimmed }, "Renaming");
    await this.refresh();
    return ack !== null;
  }

  async duplicate(notebookId: string): Promise<string | null> {
    const ack = await this.command({ op: "duplicate-notebook", notebookId }, "Duplicating");
    await this.refresh();
    return ack?.notebook.id ?? null;
  }

  /** Soft delete, with a toast offering to undo it for a while. */
  async remove(notebookId: string): Promise<boolean> {
    const item = this.state.active.find((n) => n.id === notebookId);
    const ack = await this.command({ op: "delete-notebook", notebookId }, "Deleting");
    if (ack !== null) {
      const removed = this.state.active.filter((n) => n.id !== notebookId);
      const deleted = item === undefined ? this.state.deleted : sortDeleted([{ ...item, deletedAt: new Date().toISOString() }, ...this.state.deleted]);
      this.update({ active: removed, deleted, undo: { notebookId, title: item?.title ?? notebookId } });
      this.armUndoTimer();
    }
    await this.refresh();
    return ack !== null;
  }

  async restore(notebookId: string): Promise<boolean> {
    const ack = await this.command({ op: "restore-notebook", notebookId }, "Restoring");
    if (ack !== null && this.state.undo?.notebookId === notebookId) this.dismissUndo();
    await this.refresh();
    return ack !== null;
  }

  /** Undo the deletion the toast is about. */
  async undoDelete(): Promise<boolean> {
    const offer = this.state.undo;
    if (offer === null) return false;
    return this.restore(offer.notebookId);
  }

  dismissUndo(): void {
    if (this.undoTimer !== null) clearTimeout(this.undoTimer);
    this.undoTimer = null;
    if (this.state.undo !== null) this.update({ undo: null });
  }

  /** Import an .ipynb file's text; the new notebook's id, or null with the server's reason shown. */
  /** The new notebook's id and the import's notes, or null (the error is on the page). */
  async importFile(fileName: string, text: string): Promise<{ id: string; notes: string[] } | null> {
    const result = await this.importer(text, fileName);
    if (!result.ok) {
      this.update({ error: `Import of ${fileName} failed: ${result.error}` });
      return null;
    }
    return { id: result.id, notes: result.notes };
  }

  /** Tell the page about a failure that happened outside the server's answers (reading a file). */
  reportError(message: string): void {
    this.update({ error: message });
  }

  private async command<Op extends LabOp>(command: LabSend<Op>, what: string): Promise<LabReply<Op> | null> {
    const ack = await this.transport.send(command);
    if (!ack.ok) {
      this.update({ error: `${what} failed: ${ack.error}` });
      return null;
    }
    return ack;
  }

  private armUndoTimer(): void {
    if (this.undoTimer !== null) clearTimeout(this.undoTimer);
    this.undoTimer = setTimeout(() => {
      this.undoTimer = null;
      this.update({ undo: null });
    }, this.undoMs);
  }

}

async function fetchLists(transport: LabTransport): Promise<Lists | Refusal> {
  const [active, deleted] = await Promise.all([transport.send({ op: "list-notebooks", state: "active" }), transport.send({ op: "list-notebooks", state: "deleted" })]);
  if (!active.ok) return active;
  if (!deleted.ok) return deleted;
  return { ok: true, active: active.notebooks, deleted: deleted.notebooks };
}

/** The user's own notebooks, and those others shared with them (listed apart, with the owner's name). */
export function splitShared(items: readonly NotebookListItem[]): { own: NotebookListItem[]; shared: NotebookListItem[] } {
  return { own: items.filter((n) => n.access === "edit"), shared: items.filter((n) => n.access !== "edit") };
}

function replaceItem(items: readonly NotebookListItem[], item: NotebookListItem): NotebookListItem[] {
  return items.map((n) => (n.id === item.id ? item : n));
}

export function sortActive(items: readonly NotebookListItem[]): NotebookListItem[] {
  return [...items].sort((a, b) => time(b.updatedAt) - time(a.updatedAt) || a.title.localeCompare(b.title));
}

export function sortDeleted(items: readonly NotebookListItem[]): NotebookListItem[] {
  return [...items].sort((a, b) => time(b.deletedAt) - time(a.deletedAt) || a.title.localeCompare(b.title));
}

function time(iso: string | null): number {
  const t = iso === null ? Number.NaN : Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
}
