/**
 * Cell rows ⇄ StoredCell, and the checks on cells coming in. Stored JSON is
 * parsed with zod on the way out; a row that fails names its cell and field.
 */
import { MAX_CELLS, MAX_ID_CHARS, MAX_SOURCE_CHARS, MAX_TITLE_CHARS } from "../core/limits";
import type { CellOutput } from "../core/protocol/notebook-model";
import { Prisma } from "./generated/client";
import { InvalidDataError } from "./errors";
import { cellOutputsSchema, cellTemplateSchema, lastRunSchema } from "../core/protocol/notebook-schemas";
import type { CellInput, CellTemplate, LastRun, StoredCell } from "./types";

const CELL_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

export const cellSelect = {
  id: true,
  position: true,
  kind: true,
  source: true,
  templateId: true,
  parameters: true,
  templateDetached: true,
  templateGuide: true,
  lastExecutionId: true,
  executionCount: true,
  outputs: true,
  lastRun: true,
} satisfies Prisma.CellSelect;

export type CellRow = Prisma.CellGetPayload<{ select: typeof cellSelect }>;

export function rowToCell(notebookId: string, row: CellRow): StoredCell {
  const where = `cell ${row.id} of notebook ${notebookId}`;
  if (row.kind !== "code" && row.kind !== "markdown") throw new InvalidDataError(`${where}: stored kind ${JSON.stringify(row.kind)} is not code or markdown`);
  const outputs = cellOutputsSchema.safeParse(row.outputs);
  if (!outputs.success) throw new InvalidDataError(`${where}: stored outputs are invalid: ${outputs.error.issues[0]?.message ?? ""}`);
  const lastRun = lastRunSchema.safeParse(row.lastRun ?? null);
  if (!lastRun.success) throw new InvalidDataError(`${where}: stored lastRun is invalid`);
  let template: CellTemplate | null = null;
  if (row.templateId !== null) {
    const guide = (row.templateGuide ?? { fields: [], question: null }) as { fields?: unknown; question?: unknown; revealAfter?: unknown };
    const parsed = cellTemplateSchema.safeParse({
      id: row.templateId,
      parameters: row.parameters ?? {},
      detached: row.templateDetached,
      fields: guide.fields,
      question: guide.question,
      // Only explanation cells have it: no key at all on the others (as the catalog sends them).
      ...(guide.revealAfter === undefined ? {} : { revealAfter: guide.revealAfter }),
    });
    if (!parsed.success) throw new InvalidDataError(`${where}: stored template is invalid: ${parsed.error.issues[0]?.message ?? ""}`);
    template = parsed.data;
  }
  return {
    id: row.id,
    kind: row.kind,
    source: row.source,
    outputs: outputs.data,
    executionCount: row.executionCount,
    runState: "idle",
    // Live metrics belong to a running session; stored series are read from MetricRepository.
    liveMetrics: null,
    lastRun: lastRun.data,
    executionId: row.lastExecutionId,
    template,
  };
}

/** Code-unit order of fractional indexes (independent of the database's collation). */
export function byPosition(a: { position: string }, b: { position: string }): number {
  return a.position < b.position ? -1 : a.position > b.position ? 1 : 0;
}

export function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed.length === 0) throw new InvalidDataError("a notebook title cannot be empty");
  if (trimmed.length > MAX_TITLE_CHARS) throw new InvalidDataError(`a notebook title has at most ${MAX_TITLE_CHARS} characters`);
  return trimmed;
}

export function checkCellId(id: string, where = "cell id"): void {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_CHARS || !CELL_ID_PATTERN.test(id)) {
    throw new InvalidDataError(`${where} ${JSON.stringify(String(id).slice(0, 80))}: ids are 1–${MAX_ID_CHARS} letters, digits, _ and -`);
  }
}

export function checkCell(cell: CellInput, where = `cell ${cell.id}`): void {
  checkCellId(cell.id);
  if (cell.kind !== "code" && cell.kind !== "markdown") throw new InvalidDataError(`${where}: kind must be code or markdown`);
  checkSource(cell.source, where);
  if (cell.outputs !== undefined && !cellOutputsSchema.safeParse(cell.outputs).success) throw new InvalidDataError(`${where}: outputs are invalid`);
  if (cell.lastRun !== undefined && !lastRunSchema.safeParse(cell.lastRun).success) throw new InvalidDataError(`${where}: lastRun is invalid`);
  if (cell.template && !cellTemplateSchema.safeParse(cell.template).success) throw new InvalidDataError(`${where}: template is invalid`);
}

export function checkSource(source: string, where: string): void {
  if (typeof source !== "string") throw new InvalidDataError(`${where}: source must be a string`);
  if (source.length > MAX_SOURCE_CHARS) throw new InvalidDataError(`${where}: a cell holds at most ${MAX_SOURCE_CHARS} characters`);
}

export function checkCells(cells: readonly CellInput[]): void {
  if (cells.length > MAX_CELLS) throw new InvalidDataError(`a notebook holds at most ${MAX_CELLS} cells`);
  const seen = new Set<string>();
  cells.forEach((cell, index) => {
    checkCell(cell, `cell ${index} (${String(cell.id).slice(0, 80)})`);
    if (seen.has(cell.id)) throw new InvalidDataError(`cell id ${cell.id} appears twice`);
    seen.add(cell.id);
  });
}

/** Nullable JSON columns take Prisma.DbNull for SQL NULL. */
export function nullableJson(value: Prisma.InputJsonValue | null): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null ? Prisma.DbNull : value;
}

export function outputsJson(outputs: CellOutput[]): Prisma.InputJsonValue {
  return outputs;
}

export function lastRunJson(lastRun: LastRun): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return nullableJson(lastRun);
}

/** The row for a new cell (notebookId and position added by the caller). */
export function newCellData(cell: CellInput) {
  return {
    id: cell.id,
    kind: cell.kind,
    source: cell.source,
    ...templateData(cell.template ?? null),
    executionCount: cell.executionCount ?? null,
    outputs: outputsJson(cell.outputs ?? []),
    lastRun: lastRunJson(cell.lastRun ?? null),
  };
}

/** What changes in an existing row when `cell` is saved over it; null when nothing does. */
export function changedCellData(row: CellRow, cell: CellInput, position: string): Prisma.CellUpdateInput | null {
  const data: Prisma.CellUpdateInput = {};
  if (row.position !== position) data.position = position;
  if (row.kind !== cell.kind) data.kind = cell.kind;
  if (row.source !== cell.source) data.source = cell.source;
  if (cell.executionCount !== undefined && row.executionCount !== cell.executionCount) data.executionCount = cell.executionCount;
  if (cell.outputs !== undefined && !sameJson(row.outputs, cell.outputs)) data.outputs = outputsJson(cell.outputs);
  if (cell.lastRun !== undefined && !sameJson(row.lastRun, cell.lastRun)) data.lastRun = lastRunJson(cell.lastRun);
  if (cell.template !== undefined) {
    const next = templateData(cell.template);
    if (row.templateId !== next.templateId) data.templateId = next.templateId;
    if (!sameJson(row.parameters, cell.template?.parameters ?? null)) data.parameters = next.parameters;
    if (row.templateDetached !== next.templateDetached) data.templateDetached = next.templateDetached;
    if (!sameJson(row.templateGuide, cell.template ? guideOf(cell.template) : null)) data.templateGuide = next.templateGuide;
  }
  if (Object.keys(data).length === 0) return null;
  data.updatedAt = new Date();
  return data;
}

/** A template's columns: values, the detached flag, and the catalog-computed guide. */
export function templateData(template: CellTemplate | null) {
  return {
    templateId: template?.id ?? null,
    parameters: nullableJson(template?.parameters ?? null),
    templateDetached: template?.detached ?? false,
    templateGuide: nullableJson(template ? guideOf(template) : null),
  };
}

/** What Cell.templateGuide holds: the parts of a template only the catalog computes. */
export function guideOf(template: CellTemplate): Prisma.InputJsonValue {
  const guide = template.revealAfter === undefined ? { fields: template.fields, question: template.question } : { fields: template.fields, question: template.question, revealAfter: template.revealAfter };
  return guide as unknown as Prisma.InputJsonValue;
}

function sameJson(stored: unknown, value: unknown): boolean {
  return JSON.stringify(stored ?? null) === JSON.stringify(value ?? null);
}
