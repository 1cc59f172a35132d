/**
 * .ipynb (nbformat 4) → the lab's cells. Nothing is written until the whole
 * file has passed every check; then the notebook is created in one transaction.
 */
import { randomBytes } from "node:crypto";
import type { CellOutput } from "../protocol/notebook-model";
import type { NotebookRepository } from "../persistence/notebook-repository";
import type { CellInput, StoredNotebook } from "../persistence/types";
import { parseNotebookJson } from "./guard";
import { formatPath, IpynbError } from "./ipynb-error";
import { IPYNB_LIMITS, type IpynbLimits } from "./limits";
import { nbformatSchema, type NbformatCell, type NbformatOutput } from "./nbformat-schema";
import { parseElidedMarker } from "./markers";

export interface ImportedNotebook {
  /** From the file's metadata.mgpulab.title, when it has one. */
  title: string | null;
  cells: CellInput[];
  /** What did not survive the import (raw cells become markdown, repaired ids). */
  notes: string[];
}

const schemas = new WeakMap<IpynbLimits, ReturnType<typeof nbformatSchema>>();

/** Parses and checks a .ipynb file; throws IpynbError naming the field and the reason. */
export function parseIpynb(input: string | Uint8Array, limits: IpynbLimits = IPYNB_LIMITS): ImportedNotebook {
  const json = parseNotebookJson(input, limits);
  let schema = schemas.get(limits);
  if (!schema) {
    schema = nbformatSchema(limits);
    schemas.set(limits, schema);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new IpynbError(formatPath(issue.path), describeIssue(issue));
  }
  const notes: string[] = [];
  const ids = new Set<string>();
  const cells = parsed.data.cells.map((cell, index) => toCellInput(cell, index, ids, notes));
  return { title: parsed.data.metadata?.mgpulab?.title?.trim() || null, cells, notes };
}

/** zod's wording, except a missing field is called missing. */
function describeIssue(issue: { code: string; message: string; input?: unknown }): string {
  const missing = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
  return missing ? `missing (expected ${missing[1] === "record" ? "object" : missing[1]})` : issue.message;
}

function toCellInput(cell: NbformatCell, index: number, ids: Set<string>, notes: string[]): CellInput {
  let id = cell.id;
  if (id === undefined || ids.has(id)) {
    if (id !== undefined) notes.push(`cells[${index}]: id ${id} was used twice; given a new id`);
    do id = randomBytes(4).toString("hex");
    while (ids.has(id));
  }
  ids.add(id);
  const lab = cell.metadata?.mgpulab;
  const common = { id, source: cell.source, template: lab?.template ?? null };
  switch (cell.cell_type) {
    case "code":
      return {
        ...common,
        kind: "code",
        outputs: cell.outputs.map(toCellOutput),
        executionCount: cell.execution_count ?? null,
        lastRun: lab?.lastRun ?? null,
      };
    case "markdown":
      return { ...common, kind: "markdown", outputs: [], executionCount: null, lastRun: null };
    case "raw":
      notes.push(`cells[${index}]: a raw cell was imported as markdown`);
      return { ...common, kind: "markdown", outputs: [], executionCount: null, lastRun: null };
  }
}

function toCellOutput(output: NbformatOutput): CellOutput {
  switch (output.output_type) {
    case "stream": {
      const elided = parseElidedMarker(output.text);
      if (elided !== null) return { kind: "elided", elidedBytes: elided };
      return { kind: "stream", name: output.name, text: output.text };
    }
    case "execute_result":
      return { kind: "result", executionCount: output.execution_count ?? 0, data: output.data };
    case "display_data":
      return { kind: "display", data: output.data };
    case "error":
      return { kind: "error", ename: output.ename, evalue: output.evalue, traceback: output.traceback };
  }
}

export interface ImportOptions {
  ownerId: string;
  /** Used when the file has no title of its own (e.g. the file name without .ipynb). */
  title: string;
  limits?: IpynbLimits;
}

/** Parses `input` and creates a notebook from it: all or nothing. */
export async function importIpynb(
  notebooks: NotebookRepository,
  input: string | Uint8Array,
  options: ImportOptions,
): Promise<{ notebook: StoredNotebook; notes: string[] }> {
  const imported = parseIpynb(input, options.limits);
  const notebook = await notebooks.create({ ownerId: options.ownerId, title: imported.title ?? options.title, cells: imported.cells });
  return { notebook, notes: imported.notes };
}
