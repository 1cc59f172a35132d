/**
 * The lab's notebook → .ipynb (nbformat 4.5), valid against the nbformat
 * schema. Lab-only data (template, parameters, last run, the committed
 * prediction of the question a cell asks) goes in each cell's metadata under
 * "mgpulab", which JupyterLab keeps when it saves the file.
 */
import type { CellOutput, MimeBundle } from "../core/protocol/notebook-model";
import type { NotebookRepository } from "../persistence/notebook-repository";
import type { JsonValue, StoredCell, StoredKernelSpec } from "../persistence/types";
import { elidedMarker } from "./markers";
import { placePredictions, type ExportedPrediction } from "./predictions";

export const NBFORMAT = 4;
export const NBFORMAT_MINOR = 5;

type Json = JsonValue;
type JsonObject = { [key: string]: Json };

export interface ExportableNotebook {
  title: string;
  cells: ReadonlyArray<Pick<StoredCell, "id" | "kind" | "source" | "outputs" | "executionCount" | "lastRun" | "template">>;
  /** The committed predictions, with their times. */
  predictions?: readonly ExportedPrediction[];
  /** Where its kernels start (hostId null: the lab's default host). */
  kernelSpec?: StoredKernelSpec;
}

/** A static image of a cell's charts (SVG), added as a display output so other notebook tools show it. */
export type ChartImages = ReadonlyMap<string, string>;

/** MIME metadata marking an output as the lab's chart image (not something the code displayed). */
export const CHART_IMAGE_METADATA = { mgpulab: { chart: true } };

export function toIpynbObject(notebook: ExportableNotebook, charts: ChartImages = new Map()): JsonObject {
  const { byCell, unplaced } = placePredictions(notebook.cells, notebook.predictions ?? []);
  const lab: JsonObject = { title: notebook.title };
  if (notebook.kernelSpec) lab.kernelSpec = { hostId: notebook.kernelSpec.hostId, gpus: notebook.kernelSpec.gpus };
  // No cell asks these questions any more: kept in the file all the same.
  if (unplaced.length > 0) lab.predictions = unplaced.map(predictionJson);
  return {
    cells: notebook.cells.map((cell) => exportCell(cell, charts.get(cell.id), byCell.get(cell.id))),
    metadata: {
      kernelspec: { name: "python3", display_name: "Python 3", language: "python" },
      language_info: { name: "python" },
      mgpulab: lab,
    },
    nbformat: NBFORMAT,
    nbformat_minor: NBFORMAT_MINOR,
  };
}

/** The file's text, laid out as Jupyter writes it (one-space indent, trailing newline). */
export function toIpynb(notebook: ExportableNotebook, charts?: ChartImages): string {
  return JSON.stringify(toIpynbObject(notebook, charts), null, 1) + "\n";
}

/** A file name for the download. */
export function ipynbFileName(title: string): string {
  const base = title.replace(/[^\p{L}\p{N} ._-]+/gu, "_").trim().slice(0, 100) || "notebook";
  return `${base}.ipynb`;
}

/**
 * `chartOf(executionId)` draws the charts of a cell's last run (null when it
 * logged no metrics); without it, the export has no chart images.
 * `predictionsOf(notebookId)` reads the committed predictions to carry.
 */
export async function exportNotebook(
  notebooks: NotebookRepository,
  notebookId: string,
  chartOf?: (executionId: string) => Promise<string | null>,
  predictionsOf?: (notebookId: string) => Promise<readonly ExportedPrediction[]>,
): Promise<{ fileName: string; text: string }> {
  const stored = await notebooks.load(notebookId);
  const notebook: ExportableNotebook = { ...stored, predictions: predictionsOf ? await predictionsOf(notebookId) : [] };
  const charts = new Map<string, string>();
  if (chartOf) {
    for (const cell of stored.cells) {
      if (cell.kind !== "code" || cell.executionId === null) continue;
      const svg = await chartOf(cell.executionId);
      if (svg !== null) charts.set(cell.id, svg);
    }
  }
  return { fileName: ipynbFileName(notebook.title), text: toIpynb(notebook, charts) };
}

function exportCell(cell: ExportableNotebook["cells"][number], chart: string | undefined, prediction: ExportedPrediction | undefined): JsonObject {
  const lab: JsonObject = {};
  if (cell.template) lab.template = cell.template as unknown as JsonObject;
  if (cell.kind === "code" && cell.lastRun) lab.lastRun = { status: cell.lastRun.status, durationMs: cell.lastRun.durationMs };
  if (prediction) lab.prediction = predictionJson(prediction);
  const metadata: JsonObject = Object.keys(lab).length > 0 ? { mgpulab: lab } : {};
  if (cell.kind === "markdown") {
    return { cell_type: "markdown", id: cell.id, metadata, source: lines(cell.source) };
  }
  return {
    cell_type: "code",
    execution_count: cell.executionCount,
    id: cell.id,
    metadata,
    outputs: chart === undefined ? cell.outputs.map(exportOutput) : [...cell.outputs.map(exportOutput), chartOutput(chart)],
    source: lines(cell.source),
  };
}

function predictionJson(prediction: ExportedPrediction): JsonObject {
  return { questionId: prediction.questionId, question: prediction.question, choice: prediction.choice, afterRun: prediction.afterRun, committedAt: prediction.committedAt };
}

function chartOutput(svg: string): JsonObject {
  return {
    data: { "image/svg+xml": lines(svg), "text/plain": ["<charts of this cell's last run: loss per variant and per-device step time>"] },
    metadata: CHART_IMAGE_METADATA,
    output_type: "display_data",
  };
}

function exportOutput(output: CellOutput): JsonObject {
  switch (output.kind) {
    case "stream":
      return { name: output.name, output_type: "stream", text: lines(output.text) };
    case "result":
      return { data: exportBundle(output.data), execution_count: output.executionCount, metadata: {}, output_type: "execute_result" };
    case "display":
      return { data: exportBundle(output.data), metadata: {}, output_type: "display_data" };
    case "error":
      return { ename: output.ename, evalue: output.evalue, output_type: "error", traceback: output.traceback };
    case "elided":
      return { name: "stderr", output_type: "stream", text: [elidedMarker(output.elidedBytes)] };
    case "hang": {
      // JupyterLab has no such output: keep the report readable as text.
      const header = `No progress for ${Math.round(output.idleMs / 1000)} s; stacks of every process:`;
      const stacks = output.processes.map((process) => `--- ${process.label} (pid ${process.pid}${process.alive ? "" : ", exited"}) ---\n${process.stack}`);
      return { name: "stderr", output_type: "stream", text: lines([header, ...output.summary, "", ...stacks].join("\n") + "\n") };
    }
  }
}

/** Text as a list of lines (keeping "\n"), images as one string, JSON mime types as JSON. */
function exportBundle(data: MimeBundle): JsonObject {
  const bundle: JsonObject = {};
  for (const [mime, value] of Object.entries(data)) {
    if (/^application\/(.*\+)?json$/.test(mime)) bundle[mime] = parseJsonOr(value);
    else if (mime.startsWith("text/") || mime === "image/svg+xml") bundle[mime] = lines(value);
    else bundle[mime] = value;
  }
  return bundle;
}

function parseJsonOr(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** nbformat's multiline form: "a\nb" → ["a\n", "b"]; "" → []. */
export function lines(text: string): string[] {
  const result: string[] = [];
  let start = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", start)) {
    result.push(text.slice(start, index + 1));
    start = index + 1;
  }
  if (start < text.length) result.push(text.slice(start));
  return result;
}
