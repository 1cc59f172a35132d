/**
 * Notebooks and their cells. Every edit states the version it was based on
 * (`expectedVersion`) and bumps it; a stale writer gets VersionConflictError
 * carrying the current version, and nothing is written. Outputs are not
 * edits: `setCellOutputs` does not bump the version.
 *
 * Cell order is a fractional index, so insert and move write one row; a
 * full save rewrites only the cells that changed. How the rows are written
 * inside an edit's transaction is cell-writes.ts's.
 */
import { MAX_CELLS } from "../core/limits";
import type { Prisma, PrismaClient } from "./generated/client";
import {
  byPosition,
  cellSelect,
  changedCellData,
  checkCell,
  checkCellId,
  checkCells,
  checkTitle,
  lastRunJson,
  templateData,
  outputsJson,
  rowToCell,
} from "./cell-rows";
import { InvalidDataError, NotFoundError } from "./errors";
import { checkPredictionInputs, type PredictionInput } from "./prediction-repository";
import { assignKeys, keyBetween, keysBetween, MAX_KEY_LENGTH } from "./fractional-index";
import type { CellInput, EditBase, LastRun, NotebookSummary, StoredKernelSpec, StoredNotebook } from "./types";
import type { CellOutput } from "../core/protocol/notebook-model";
import { bumpVersion, CHUNK, insertCells, positions, renumber, type Tx } from "./cell-writes";
import { checkKernelSpec } from "./notebook-document";

export { toNotebookDocument } from "./notebook-document";

const summarySelect = {
  id: true,
  title: true,
  ownerId: true,
  owner: { select: { name: true } },
  version: true,
  createdAt: true,
  updatedAt: true,
  deletedAt: true,
  _count: { select: { cells: true } },
} satisfies Prisma.NotebookSelect;

const notebookSelect = {
  id: true,
  title: true,
  ownerId: true,
  version: true,
  lastSeq: true,
  createdAt: true,
  updatedAt: true,
  deletedAt: true,
  kernelHostId: true,
  kernelGpus: true,
} satisfies Prisma.NotebookSelect;


export interface ListOptions {
  ownerId?: string;
  /** Only these notebooks (the ones the asker may read). */
  ids?: readonly string[];
  /** "active" (default), "deleted" (the trash) or "all". */
  state?: "active" | "deleted" | "all";
}

export interface CreateNotebookInput {
  ownerId: string;
  /** A participant's copy: the workshop it belongs to (its facilitator sees it). */
  workshopId?: string | null;
  title: string;
  cells?: CellInput[];
  /** The owner's committed predictions, with their original times (an import): stored in the same transaction. */
  predictions?: readonly PredictionInput[];
  /** Where its kernels start (default: the lab's default host, no GPU). */
  kernelSpec?: StoredKernelSpec;
}

export interface VersionResult {
  version: number;
}

export class NotebookRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async list(options: ListOptions = {}): Promise<NotebookSummary[]> {
    const state = options.state ?? "active";
    const rows = await this.prisma.notebook.findMany({
      where: {
        ownerId: options.ownerId,
        id: options.ids ? { in: [...options.ids] } : undefined,
        deletedAt: state === "active" ? null : state === "deleted" ? { not: null } : undefined,
      },
      orderBy: [{ updatedAt: "desc" }, { id: "asc" }],
      select: summarySelect,
    });
    return rows.map(toSummary);
  }

  /**
   * The owner's most recently edited notebook (not deleted) with a cell
   * rendered from one of `scenarioId`'s templates ("<scenario>/<cell>"), or null.
   */
  async latestWithScenario(ownerId: string, scenarioId: string): Promise<NotebookSummary | null> {
    // A range rather than LIKE: ids may hold "_", a LIKE wildcard. "0" is the character after "/".
    const templateId = { gte: `${scenarioId}/`, lt: `${scenarioId}0` };
    const row = await this.prisma.notebook.findFirst({
      where: { ownerId, deletedAt: null, cells: { some: { templateId } } },
      orderBy: [{ updatedAt: "desc" }, { id: "asc" }],
      select: summarySelect,
    });
    return row ? toSummary(row) : null;
  }

  /** Creates a notebook with its cells in one transaction (an import either lands whole or not at all). */
  async create(input: CreateNotebookInput): Promise<StoredNotebook> {
    const title = checkTitle(input.title);
    const cells = input.cells ?? [];
    checkCells(cells);
    const predictions = input.predictions ?? [];
    checkPredictionInputs(predictions);
    const kernelSpec = checkKernelSpec(input.kernelSpec ?? { hostId: null, gpus: 0 });
    const id = await this.prisma.$transaction(
      async (tx) => {
        const owner = await tx.user.findUnique({ where: { id: input.ownerId }, select: { id: true } });
        if (!owner) throw new NotFoundError("user", input.ownerId);
        const notebook = await tx.notebook.create({
          data: { title, ownerId: input.ownerId, workshopId: input.workshopId ?? null, kernelHostId: kernelSpec.hostId, kernelGpus: kernelSpec.gpus },
          select: { id: true },
        });
        await insertCells(tx, notebook.id, cells, keysBetween(null, null, cells.length));
        if (predictions.length > 0) {
          await tx.prediction.createMany({ data: predictions.map((prediction) => ({ ...prediction, notebookId: notebook.id, userId: input.ownerId })) });
        }
        return notebook.id;
      },
      { timeout: 60_000 },
    );
    return this.load(id);
  }

  /** The notebook with its cells in order. Deleted notebooks only with `includeDeleted`. */
  async load(notebookId: string, options: { includeDeleted?: boolean } = {}): Promise<StoredNotebook> {
    const [notebook, rows] = await this.prisma.$transaction([
      this.prisma.notebook.findUnique({ where: { id: notebookId }, select: notebookSelect }),
      this.prisma.cell.findMany({ where: { notebookId }, select: cellSelect }),
    ]);
    if (!notebook) throw new NotFoundError("notebook", notebookId);
    if (notebook.deletedAt && !options.includeDeleted) throw new NotFoundError("notebook", notebookId, "deleted");
    const { kernelHostId, kernelGpus, ...rest } = notebook;
    return { ...rest, kernelSpec: { hostId: kernelHostId, gpus: kernelGpus }, cells: rows.sort(byPosition).map((row) => rowToCell(notebookId, row)) };
  }

  async rename(notebookId: string, title: string, expectedVersion?: number | EditBase): Promise<VersionResult> {
    const checked = checkTitle(title);
    return this.edit(notebookId, expectedVersion, async (tx) => {
      await tx.notebook.update({ where: { id: notebookId }, data: { title: checked }, select: { id: true } });
    });
  }

  /**
   * A copy with the same cells (ids, outputs and templates included), version 0.
   * The owner's own committed predictions come along, with their times (as
   * an export/import keeps them); a copy for someone else starts with none.
   */
  async duplicate(notebookId: string, options: { ownerId?: string; title?: string } = {}): Promise<StoredNotebook> {
    const source = await this.load(notebookId);
    const title = options.title ?? `${source.title} (copy)`.slice(0, 200);
    const ownerId = options.ownerId ?? source.ownerId;
    const predictions =
      ownerId === source.ownerId
        ? await this.prisma.prediction.findMany({
            where: { notebookId, userId: ownerId },
            select: { questionId: true, question: true, choice: true, afterRun: true, committedAt: true },
          })
        : [];
    return this.create({ ownerId, title, cells: source.cells, predictions, kernelSpec: source.kernelSpec });
  }

  /** Where the notebook's next kernel starts (an edit: it bumps the version). Whether the host exists is the caller's to check. */
  async setKernelSpec(notebookId: string, spec: StoredKernelSpec, expectedVersion?: number | EditBase): Promise<VersionResult> {
    const checked = checkKernelSpec(spec);
    return this.edit(notebookId, expectedVersion, async (tx) => {
      await tx.notebook.update({ where: { id: notebookId }, data: { kernelHostId: checked.hostId, kernelGpus: checked.gpus }, select: { id: true } });
    });
  }

  /** Hides the notebook (undo with restore). Idempotent. */
  async softDelete(notebookId: string): Promise<void> {
    const { count } = await this.prisma.notebook.updateMany({ where: { id: notebookId, deletedAt: null }, data: { deletedAt: new Date() } });
    if (count === 0) await this.requireExists(notebookId);
  }

  async restore(notebookId: string): Promise<void> {
    const { count } = await this.prisma.notebook.updateMany({ where: { id: notebookId, deletedAt: { not: null } }, data: { deletedAt: null } });
    if (count === 0) await this.requireExists(notebookId);
  }

  /** Removes for good the notebooks deleted before `before`, with their cells, runs, outputs and metrics. */
  async purgeDeleted(before: Date): Promise<number> {
    const { count } = await this.prisma.notebook.deleteMany({ where: { deletedAt: { lt: before } } });
    return count;
  }

  /** Replaces the cell list: cells missing from `cells` are deleted, new ones created, changed ones updated. */
  async saveCells(notebookId: string, expectedVersion: number | EditBase, cells: CellInput[]): Promise<VersionResult> {
    checkCells(cells);
    return this.edit(
      notebookId,
      expectedVersion,
      async (tx) => {
        const rows = await tx.cell.findMany({ where: { notebookId }, select: cellSelect });
        const existing = new Map(rows.map((row) => [row.id, row]));
        const keep = new Set(cells.map((cell) => cell.id));
        const removed = rows.filter((row) => !keep.has(row.id)).map((row) => row.id);
        for (let i = 0; i < removed.length; i += CHUNK) {
          await tx.cell.deleteMany({ where: { notebookId, id: { in: removed.slice(i, i + CHUNK) } } });
        }
        const keys = assignKeys(
          cells.map((cell) => cell.id),
          new Map(rows.map((row) => [row.id, row.position])),
        );
        const created: Array<{ cell: CellInput; position: string }> = [];
        for (const [index, cell] of cells.entries()) {
          const row = existing.get(cell.id);
          if (!row) {
            created.push({ cell, position: keys[index]! });
            continue;
          }
          const data = changedCellData(row, cell, keys[index]!);
          if (data) await tx.cell.update({ where: { notebookId_id: { notebookId, id: cell.id } }, data, select: { id: true } });
        }
        await insertCells(
          tx,
          notebookId,
          created.map((entry) => entry.cell),
          created.map((entry) => entry.position),
        );
      },
      60_000,
    );
  }

  /** Inserts `cell` at `index` (clamped to the end), as notebook-ops.insertCell does. */
  async insertCell(notebookId: string, expectedVersion: number | EditBase, index: number, cell: CellInput): Promise<VersionResult> {
    checkCell(cell);
    return this.edit(notebookId, expectedVersion, async (tx) => {
      const order = await positions(tx, notebookId);
      if (order.length >= MAX_CELLS) throw new InvalidDataError(`a notebook holds at most ${MAX_CELLS} cells`);
      if (order.some((row) => row.id === cell.id)) throw new InvalidDataError(`cell ${cell.id} already exists`);
      const at = Math.max(0, Math.min(index, order.length));
      const position = keyBetween(order[at - 1]?.position ?? null, order[at]?.position ?? null);
      await insertCells(tx, notebookId, [cell], [position]);
      if (position.length > MAX_KEY_LENGTH) await renumber(tx, notebookId);
    });
  }

  /** Moves a cell to `toIndex` in the list without it (clamped), as notebook-ops.moveCell does. */
  async moveCell(notebookId: string, expectedVersion: number | EditBase, cellId: string, toIndex: number): Promise<VersionResult> {
    return this.edit(notebookId, expectedVersion, async (tx) => {
      const order = await positions(tx, notebookId);
      const from = order.findIndex((row) => row.id === cellId);
      if (from === -1) throw new NotFoundError("cell", cellId, `in notebook ${notebookId}`);
      order.splice(from, 1);
      const at = Math.max(0, Math.min(toIndex, order.length));
      const position = keyBetween(order[at - 1]?.position ?? null, order[at]?.position ?? null);
      await tx.cell.update({ where: { notebookId_id: { notebookId, id: cellId } }, data: { position, updatedAt: new Date() }, select: { id: true } });
      if (position.length > MAX_KEY_LENGTH) await renumber(tx, notebookId);
    });
  }

  async deleteCell(notebookId: string, expectedVersion: number | EditBase, cellId: string): Promise<VersionResult> {
    checkCellId(cellId);
    return this.edit(notebookId, expectedVersion, async (tx) => {
      const { count } = await tx.cell.deleteMany({ where: { notebookId, id: cellId } });
      if (count === 0) throw new NotFoundError("cell", cellId, `in notebook ${notebookId}`);
    });
  }

  /** Changes one cell's source, kind or template. */
  async updateCell(
    notebookId: string,
    expectedVersion: number | EditBase,
    cellId: string,
    patch: Partial<Pick<CellInput, "source" | "kind" | "template">>,
  ): Promise<VersionResult> {
    checkCell({ id: cellId, kind: patch.kind ?? "code", source: patch.source ?? "", template: patch.template });
    return this.edit(notebookId, expectedVersion, async (tx) => {
      const data: Prisma.CellUpdateManyMutationInput = { updatedAt: new Date() };
      if (patch.source !== undefined) data.source = patch.source;
      if (patch.kind !== undefined) data.kind = patch.kind;
      if (patch.template !== undefined) Object.assign(data, templateData(patch.template));
      const { count } = await tx.cell.updateMany({ where: { notebookId, id: cellId }, data });
      if (count === 0) throw new NotFoundError("cell", cellId, `in notebook ${notebookId}`);
    });
  }

  updateCellSource(notebookId: string, expectedVersion: number | EditBase, cellId: string, source: string): Promise<VersionResult> {
    return this.updateCell(notebookId, expectedVersion, cellId, { source });
  }

  /**
   * Records what a cell shows after a run or a clear (no version bump: outputs
   * are not edits). Returns false when the cell no longer exists.
   */
  async setCellOutputs(
    notebookId: string,
    cellId: string,
    state: { outputs: CellOutput[]; executionCount?: number | null; lastRun?: LastRun },
  ): Promise<boolean> {
    checkCell({ id: cellId, kind: "code", source: "", outputs: state.outputs, lastRun: state.lastRun });
    const data: Prisma.CellUpdateManyMutationInput = { outputs: outputsJson(state.outputs) };
    if (state.executionCount !== undefined) data.executionCount = state.executionCount;
    if (state.lastRun !== undefined) data.lastRun = lastRunJson(state.lastRun);
    const { count } = await this.prisma.cell.updateMany({ where: { notebookId, id: cellId }, data });
    return count === 1;
  }

  /**
   * Runs `body` in a transaction after bumping the version from
   * `expectedVersion` (or unconditionally when it is undefined).
   *
   * An edit with an id that was tried before (the connection dropped during
   * its COMMIT, a PostgreSQL restart: it may have been stored) first reads
   * whether the notebook's last commit is this edit. Then it was stored, and
   * is not run again: run again, it would be refused as a conflict with
   * itself, reported as failed though stored, and leave its runtime's version
   * behind, so that every later edit conflicts too. What it stored was the
   * version after its base, so that is its result (a later writer's bump is
   * not taken for this one's, so their conflict still shows).
   */
  private async edit(notebookId: string, expectedVersion: number | EditBase | undefined, body: (tx: Tx) => Promise<void>, timeout = 10_000): Promise<VersionResult> {
    if (typeof expectedVersion === "object" && expectedVersion.retried) {
      const stored = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { lastCommitId: true } });
      if (stored?.lastCommitId === expectedVersion.editId) return { version: expectedVersion.version + 1 };
    }
    return this.prisma.$transaction(
      async (tx) => {
        const version = await bumpVersion(tx, notebookId, expectedVersion);
        await body(tx);
        return { version };
      },
      { timeout },
    );
  }

  private async requireExists(notebookId: string): Promise<void> {
    const found = await this.prisma.notebook.findUnique({ where: { id: notebookId }, select: { id: true } });
    if (!found) throw new NotFoundError("notebook", notebookId);
  }
}

function toSummary(row: Prisma.NotebookGetPayload<{ select: typeof summarySelect }>): NotebookSummary {
  const { _count, owner, ...summary } = row;
  return { ...summary, ownerName: owner.name, cellCount: _count.cells };
}
