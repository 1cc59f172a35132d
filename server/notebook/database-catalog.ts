/** The notebook catalog on the lab's database (its repositories). */
import type { NotebookListItem } from "../core/protocol/notebook-model";
import { NotFoundError, toNotebookDocument } from "../persistence";
import type { NotebookSummary } from "../persistence/types";
import type { NotebookCatalog } from "./notebook-hub";
import { DatabaseNotebookPersistence, type Repositories } from "./notebook-persistence";
import { freshCopyTitle } from "./scenario-copies";

export class DatabaseCatalog implements NotebookCatalog {
  /**
   * `defaultHost`: the host a notebook's kernels start on when its spec names none. `driverId`: with several
   * lab servers, this server's id (its kernels' writes are stored only while it drives their notebook).
   */
  constructor(
    readonly repos: Repositories,
    private readonly report: (message: string) => void,
    private readonly defaultHost = "local",
    private readonly driverId: string | null = null,
  ) {}

  /** The notebook as its owner keeps it: their predictions; its runs are started in their name (whoever clicked Run). */
  async load(notebookId: string) {
    const stored = await this.repos.notebooks.load(notebookId, { includeDeleted: true });
    const predictions = await this.repos.predictions.list(notebookId, stored.ownerId);
    const persistence = new DatabaseNotebookPersistence(notebookId, stored.version, this.repos, stored.ownerId, this.report, this.driverId);
    return { doc: toNotebookDocument(stored, predictions, this.defaultHost), persistence };
  }

  /** The notebooks in `readable` (id → what the asker may do), newest edit first. */
  async list(state: "active" | "deleted", readable: ReadonlyMap<string, NotebookListItem["access"]>): Promise<NotebookListItem[]> {
    const summaries = await this.repos.notebooks.list({ state, ids: [...readable.keys()] });
    return summaries.map((summary) => toListItem(summary, readable.get(summary.id) ?? "read"));
  }

  async create(ownerId: string, title: string): Promise<NotebookListItem> {
    const stored = await this.repos.notebooks.create({ ownerId, title, cells: [{ id: "cell-1", kind: "code", source: "" }] });
    return this.summary(stored.id);
  }

  async createWithCells(ownerId: string, title: string, cells: Parameters<NotebookCatalog["createWithCells"]>[2], workshopId: string | null = null): Promise<NotebookListItem> {
    const stored = await this.repos.notebooks.create({
      ownerId,
      workshopId,
      title,
      cells: cells.map((cell, index) => ({
        id: `cell-${index + 1}`,
        kind: cell.kind,
        source: cell.source,
        template: cell.template,
      })),
    });
    return this.summary(stored.id);
  }

  async duplicate(ownerId: string, notebookId: string): Promise<NotebookListItem> {
    const copy = await this.repos.notebooks.duplicate(notebookId, { ownerId });
    return this.summary(copy.id);
  }

  async rename(notebookId: string, title: string): Promise<void> {
    await this.repos.notebooks.rename(notebookId, title);
  }

  async setDeleted(notebookId: string, deleted: boolean): Promise<void> {
    if (deleted) await this.repos.notebooks.softDelete(notebookId);
    else await this.repos.notebooks.restore(notebookId);
  }

  async latestScenarioCopy(ownerId: string, scenarioId: string): Promise<NotebookListItem | null> {
    const found = await this.repos.notebooks.latestWithScenario(ownerId, scenarioId);
    return found ? toListItem(found, "edit") : null;
  }

  async freshTitle(ownerId: string, base: string): Promise<string> {
    // Deleted notebooks count: restored, they would otherwise share the name.
    const all = await this.repos.notebooks.list({ ownerId, state: "all" });
    return freshCopyTitle(base, all.map((summary) => summary.title));
  }

  /** One notebook's list entry; `access` is the asker's (the owner's by default: renames and deletes are theirs). */
  async summary(notebookId: string, access: NotebookListItem["access"] = "edit"): Promise<NotebookListItem> {
    const [found] = await this.repos.notebooks.list({ state: "all", ids: [notebookId] });
    if (!found) throw new NotFoundError("notebook", notebookId);
    return toListItem(found, access);
  }
}

function toListItem(summary: NotebookSummary, access: NotebookListItem["access"]): NotebookListItem {
  return {
    id: summary.id,
    title: summary.title,
    owner: { id: summary.ownerId, name: summary.ownerName },
    access,
    cellCount: summary.cellCount,
    updatedAt: summary.updatedAt.toISOString(),
    deletedAt: summary.deletedAt ? summary.deletedAt.toISOString() : null,
  };
}
