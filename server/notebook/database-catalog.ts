/** The notebook catalog on the lab's database (repositories over one Prisma client). */
import type { NotebookListItem } from "../core/protocol/notebook-model";
import { LOCAL_USER, MetricRepository, NotFoundError, NotebookRepository, PredictionRepository, RunRepository, toNotebookDocument, type PrismaClient } from "../persistence";
import type { NotebookSummary } from "../persistence/types";
import type { NotebookCatalog } from "./notebook-hub";
import { DatabaseNotebookPersistence, type Repositories } from "./notebook-persistence";
import { freshCopyTitle } from "./scenario-copies";

export class DatabaseCatalog implements NotebookCatalog {
  readonly repos: Repositories;

  /** `defaultHost`: the host a notebook's kernels start on when its spec names none. */
  constructor(
    prisma: PrismaClient,
    private readonly report: (message: string) => void,
    private readonly userId: string = LOCAL_USER.id,
    private readonly defaultHost = "local",
  ) {
    this.repos = {
      notebooks: new NotebookRepository(prisma),
      runs: new RunRepository(prisma),
      metrics: new MetricRepository(prisma),
      predictions: new PredictionRepository(prisma),
    };
  }

  async load(notebookId: string) {
    const stored = await this.repos.notebooks.load(notebookId, { includeDeleted: true });
    const predictions = await this.repos.predictions.list(notebookId, this.userId);
    const persistence = new DatabaseNotebookPersistence(notebookId, stored.version, this.repos, this.userId, this.report);
    return { doc: toNotebookDocument(stored, predictions, this.defaultHost), persistence };
  }

  async list(state: "active" | "deleted"): Promise<NotebookListItem[]> {
    return (await this.repos.notebooks.list({ state })).map(toListItem);
  }

  async create(title: string): Promise<NotebookListItem> {
    const stored = await this.repos.notebooks.create({ ownerId: this.userId, title, cells: [{ id: "cell-1", kind: "code", source: "" }] });
    return this.summary(stored.id);
  }

  async createWithCells(title: string, cells: Parameters<NotebookCatalog["createWithCells"]>[1]): Promise<NotebookListItem> {
    const stored = await this.repos.notebooks.create({
      ownerId: this.userId,
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

  async duplicate(notebookId: string): Promise<NotebookListItem> {
    const copy = await this.repos.notebooks.duplicate(notebookId, { ownerId: this.userId });
    return this.summary(copy.id);
  }

  async rename(notebookId: string, title: string): Promise<void> {
    await this.repos.notebooks.rename(notebookId, title);
  }

  async setDeleted(notebookId: string, deleted: boolean): Promise<void> {
    if (deleted) await this.repos.notebooks.softDelete(notebookId);
    else await this.repos.notebooks.restore(notebookId);
  }

  async latestScenarioCopy(scenarioId: string): Promise<NotebookListItem | null> {
    const found = await this.repos.notebooks.latestWithScenario(this.userId, scenarioId);
    return found ? toListItem(found) : null;
  }

  async freshTitle(base: string): Promise<string> {
    // Deleted notebooks count: restored, they would otherwise share the name.
    const all = await this.repos.notebooks.list({ ownerId: this.userId, state: "all" });
    return freshCopyTitle(base, all.map((summary) => summary.title));
  }

  async summary(notebookId: string): Promise<NotebookListItem> {
    const found = (await this.repos.notebooks.list({ state: "all" })).find((summary) => summary.id === notebookId);
    if (!found) throw new NotFoundError("notebook", notebookId);
    return toListItem(found);
  }
}

function toListItem(summary: NotebookSummary): NotebookListItem {
  return {
    id: summary.id,
    title: summary.title,
    cellCount: summary.cellCount,
    updatedAt: summary.updatedAt.toISOString(),
    deletedAt: summary.deletedAt ? summary.deletedAt.toISOString() : null,
  };
}
