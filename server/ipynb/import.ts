/**
 * .ipynb (nbformat 4) → the lab's cells. Nothing is written until the whole
 * file has passed every check; then the notebook is created in one transaction.
 *
 * What the file says is not trusted beyond its text: outputs are cut to the
 * live output budget, a cell claiming to be rendered from a template is
 * imported detached unless the scenario catalog renders exactly its code, and
 * a committed prediction is kept (with its time) only when it is well formed
 * and about a question the notebook asks (predictions.ts).
 */
import { randomBytes } from "node:crypto";
import type { NotebookRepository } from "../persistence/notebook-repository";
import type { CellInput, StoredKernelSpec, StoredNotebook } from "../persistence/types";
import type { TemplateRenderer } from "../notebook/template-cells";
import { parseNotebookJson } from "./guard";
import { formatPath, IpynbError } from "./ipynb-error";
import { IPYNB_LIMITS, type IpynbLimits } from "./limits";
import { nbformatSchema, type NbformatCell } from "./nbformat-schema";
import { budgetOutputs } from "./output-budget";
import { readPrediction, settlePredictions, type FoundPrediction } from "./predictions";
import { readKernelSpec, settleKernelSpec } from "./kernel-spec";
import { settleTemplateClaims, type TemplateClaim } from "./template-claims";
import { assertValidUnicode } from "./unicode";

export interface ImportedNotebook {
  /** From the file's metadata.mgpulab.title, when it has one. */
  title: string | null;
  cells: CellInput[];
  /** What did not survive the import (raw cells become markdown, repaired ids, elided outputs). */
  notes: string[];
  /**
   * Cells whose metadata says their code is rendered from a template. They are
   * in `cells` detached; `settleTemplateClaims` attaches those whose code the
   * catalog renders exactly.
   */
  templateClaims: TemplateClaim[];
  /** Committed predictions in the file, well formed; `saveImported` keeps those about questions the notebook asks. */
  predictions: FoundPrediction[];
  /** From metadata.mgpulab.kernelSpec when well formed; `saveImported` keeps its host only when the lab has it. */
  kernelSpec: StoredKernelSpec;
}

const schemas = new WeakMap<IpynbLimits, ReturnType<typeof nbformatSchema>>();

/** Parses and checks a .ipynb file; throws IpynbError naming the field and the reason. */
export function parseIpynb(input: string | Uint8Array, limits: IpynbLimits = IPYNB_LIMITS): ImportedNotebook {
  let schema = schemas.get(limits);
  if (!schema) {
    schema = nbformatSchema(limits);
    schemas.set(limits, schema);
  }
  const parsed = schema.safeParse(parseNotebookJson(input, limits));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new IpynbError(formatPath(issue.path), describeIssue(issue));
  }
  assertValidUnicode(parsed.data);
  const lab = parsed.data.metadata?.mgpulab;
  const notes: string[] = [];
  const kernelSpec = readKernelSpec(lab?.kernelSpec, "metadata.mgpulab.kernelSpec", notes);
  const imported: ImportedNotebook = { title: lab?.title?.trim() || null, cells: [], notes, templateClaims: [], predictions: [], kernelSpec };
  const ids = new Set<string>();
  for (const [index, cell] of parsed.data.cells.entries()) {
    imported.cells.push(toCellInput(cell, index, ids, imported, limits));
    const prediction = cell.metadata?.mgpulab?.prediction;
    if (prediction !== undefined) addPrediction(imported, prediction, `cells[${index}]`);
  }
  for (const [index, prediction] of (lab?.predictions ?? []).entries()) addPrediction(imported, prediction, `metadata.mgpulab.predictions[${index}]`);
  return imported;
}

function addPrediction(imported: ImportedNotebook, value: unknown, where: string): void {
  const found = readPrediction(value, where, imported.notes);
  if (found !== null) imported.predictions.push(found);
}

/** zod's wording, except a missing field is called missing. */
function describeIssue(issue: { code: string; message: string; input?: unknown }): string {
  const missing = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
  return missing ? `missing (expected ${missing[1] === "record" ? "object" : missing[1]})` : issue.message;
}

function toCellInput(cell: NbformatCell, index: number, ids: Set<string>, imported: ImportedNotebook, limits: IpynbLimits): CellInput {
  const notes = imported.notes;
  let id = cell.id;
  if (id === undefined || ids.has(id)) {
    if (id !== undefined) notes.push(`cells[${index}]: id ${id} was used twice; given a new id`);
    do id = randomBytes(4).toString("hex");
    while (ids.has(id));
  }
  ids.add(id);
  const lab = cell.metadata?.mgpulab;
  let template = lab?.template ?? null;
  if (template !== null && !template.detached) {
    // Only the catalog can vouch for attached code; until it does, the cell is the file's own text.
    imported.templateClaims.push({ index, claimed: template });
    template = { ...template, detached: true };
  }
  const common = { id, source: cell.source, template };
  switch (cell.cell_type) {
    case "code": {
      const budgeted = budgetOutputs(cell.outputs, limits.outputBudget);
      if (budgeted.elided.length > 0) notes.push(`cells[${index}]: elided to the lab's output budget: ${budgeted.elided.join("; ")}`);
      return {
        ...common,
        kind: "code",
        outputs: budgeted.outputs,
        executionCount: cell.execution_count ?? null,
        lastRun: lab?.lastRun ?? null,
      };
    }
    case "markdown":
      return { ...common, kind: "markdown", outputs: [], executionCount: null, lastRun: null };
    case "raw":
      notes.push(`cells[${index}]: a raw cell was imported as markdown`);
      return { ...common, kind: "markdown", outputs: [], executionCount: null, lastRun: null };
  }
}

export interface ImportOptions {
  ownerId: string;
  /** Used when the file has no title of its own (e.g. the file name without .ipynb). */
  title: string;
  limits?: IpynbLimits;
  /** The scenario catalog: without it, every cell claiming an attached template is imported detached. */
  templates?: TemplateRenderer;
  /** The lab's host ids: a kernel spec naming another host falls back to the default host, with a note. Without it, the file's host is kept. */
  hostIds?: readonly string[];
}

/** Creates a notebook from a parsed file (templated cells settled first): all or nothing. */
export async function saveImported(
  notebooks: NotebookRepository,
  imported: ImportedNotebook,
  options: Omit<ImportOptions, "limits">,
): Promise<{ notebook: StoredNotebook; notes: string[] }> {
  const templateNotes = await settleTemplateClaims(imported.cells, imported.templateClaims, options.templates);
  // After the claims are settled: the questions asked are those of the cells as they will be stored.
  const predictionNotes: string[] = [];
  const predictions = settlePredictions(imported.cells, imported.predictions, new Date(), predictionNotes);
  const specNotes: string[] = [];
  const kernelSpec = settleKernelSpec(imported.kernelSpec, options.hostIds, specNotes);
  const notebook = await notebooks.create({ ownerId: options.ownerId, title: imported.title ?? options.title, cells: imported.cells, predictions, kernelSpec });
  return { notebook, notes: [...imported.notes, ...templateNotes, ...predictionNotes, ...specNotes] };
}

/** Parses `input` and creates a notebook from it: all or nothing. */
export async function importIpynb(
  notebooks: NotebookRepository,
  input: string | Uint8Array,
  options: ImportOptions,
): Promise<{ notebook: StoredNotebook; notes: string[] }> {
  return saveImported(notebooks, parseIpynb(input, options.limits), options);
}
