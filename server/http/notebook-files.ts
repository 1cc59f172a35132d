/**
 * .ipynb files over HTTP (too large for a socket message): import creates a
 * notebook from the request body, export downloads one. Everything else
 * falls through to Next.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseIpynb, saveImported, type ImportedNotebook } from "../ipynb/import";
import { exportNotebook } from "../ipynb/export";
import { ImportGate } from "../ipynb/import-gate";
import { IPYNB_LIMITS } from "../ipynb/limits";
import type { TemplateRenderer } from "../notebook/template-cells";
import type { NotebookRepository, PredictionRepository } from "../persistence";
import { toExportedPrediction } from "../ipynb/predictions";
import { replyError, sendError, sendJson } from "./json-reply";
import { MAX_TITLE_CHARS } from "../core/limits";
import { NOTEBOOK_IMPORT_PATH } from "../core/protocol/socket-api";

const EXPORT_PATH = /^\/api\/notebooks\/([A-Za-z0-9_-]{1,64})\/export$/;

export interface NotebookFilesOptions {
  notebooks: NotebookRepository;
  /** The owner's committed predictions travel in the exported file (and come back on import); without it, exports carry none. */
  predictions?: PredictionRepository;
  /** Draws a cell execution's charts for the export (SVG), or null without metrics. */
  chartOf?: (executionId: string) => Promise<string | null>;
  ownerId: string;
  onError: (error: unknown) => void;
  /** The scenario catalog, to keep an imported templated cell attached when it renders exactly that code. */
  templates?: TemplateRenderer;
  /** The lab's host ids: an imported kernel spec naming another host starts on the default host, with a note. */
  hostIds?: readonly string[];
  /** A title none of the owner's notebooks has ("Untitled (2)" when "Untitled" is taken); the one asked for without it. */
  freshTitle?: (base: string) => Promise<string>;
}

/** Imports of one server share this: at most one maximum-size file is held in memory at a time. */
const importGate = new ImportGate(IPYNB_LIMITS.maxBytes);

/** Returns false when the request is not for these routes. */
export function handleNotebookFiles(req: IncomingMessage, res: ServerResponse, options: NotebookFilesOptions): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === NOTEBOOK_IMPORT_PATH) {
    if (req.method !== "POST") return sendError(res, "invalid", "use POST with the .ipynb file as the body", 405);
    void importFile(req, res, url, options).catch((error: unknown) => replyError(res, error, options.onError, "handle this file"));
    return true;
  }
  const exportMatch = EXPORT_PATH.exec(url.pathname);
  if (exportMatch) {
    if (req.method !== "GET") return sendError(res, "invalid", "use GET", 405);
    void exportFile(res, exportMatch[1]!, options).catch((error: unknown) => replyError(res, error, options.onError, "handle this file"));
    return true;
  }
  return false;
}

async function importFile(req: IncomingMessage, res: ServerResponse, url: URL, options: NotebookFilesOptions): Promise<void> {
  const title = (url.searchParams.get("title") ?? "").trim().slice(0, MAX_TITLE_CHARS) || "Imported notebook";
  const declared = contentLength(req);
  if (declared !== null && declared > IPYNB_LIMITS.maxBytes) {
    await drain(req);
    sendError(res, "too-large", `the file is larger than ${IPYNB_LIMITS.maxBytes} bytes`);
    return;
  }
  const release = await importGate.acquire(declared ?? IPYNB_LIMITS.maxBytes);
  try {
    const imported = await receiveNotebook(req);
    if (imported === null) {
      sendError(res, "too-large", `the file is larger than ${IPYNB_LIMITS.maxBytes} bytes`);
      return;
    }
    // Importing "Untitled.ipynb" next to an "Untitled" gives "Untitled (2)", as a new notebook or a scenario copy does.
    const unique = options.freshTitle ? await options.freshTitle(title) : title;
    const { notebook, notes } = await saveImported(options.notebooks, imported, { ownerId: options.ownerId, title: unique, templates: options.templates, hostIds: options.hostIds });
    sendJson(res, 201, { id: notebook.id, title: notebook.title, notes });
  } finally {
    release();
  }
}

/**
 * The body parsed and its outputs budgeted, or null when it is too large. Its
 * own function so that the raw bytes are unreachable once it returns: the
 * database write that follows holds only the kept cells.
 */
async function receiveNotebook(req: IncomingMessage): Promise<ImportedNotebook | null> {
  const body = await readBody(req, IPYNB_LIMITS.maxBytes);
  return body === null ? null : parseIpynb(body);
}

async function exportFile(res: ServerResponse, notebookId: string, options: NotebookFilesOptions): Promise<void> {
  const predictions = options.predictions;
  const predictionsOf = predictions ? async (id: string) => (await predictions.list(id, options.ownerId)).map(toExportedPrediction) : undefined;
  const { fileName, text } = await exportNotebook(options.notebooks, notebookId, options.chartOf, predictionsOf);
  res.writeHead(200, {
    "Content-Type": "application/x-ipynb+json; charset=utf-8",
    "Content-Disposition": `attachment; filename="${fileName.replace(/[^\x20-\x7e]|"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(fileName)}`,
    "Cache-Control": "no-store",
  });
  res.end(text);
}

function contentLength(req: IncomingMessage): number | null {
  const header = req.headers["content-length"];
  if (header === undefined || !/^\d{1,15}$/.test(header)) return null;
  return Number(header);
}

/**
 * The body, or null once it passes `limit` bytes (the rest is read and
 * dropped). With a Content-Length it is received into one buffer of that
 * size, so a large file is never held twice (as chunks and their concatenation).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = contentLength(req);
  return new Promise((resolve, reject) => {
    let whole = declared !== null && declared <= limit ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      if (size + chunk.length > limit) {
        tooLarge = true;
        whole = null;
        chunks.length = 0;
        return;
      }
      if (whole !== null && size + chunk.length > whole.length) {
        chunks.push(whole.subarray(0, size)); // more than declared: cannot happen over HTTP/1.1, kept correct anyway
        whole = null;
      }
      if (whole !== null) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    });
    req.on("end", () => {
      if (tooLarge) resolve(null);
      else resolve(whole !== null ? whole.subarray(0, size) : Buffer.concat(chunks, size));
    });
    req.on("error", reject);
    // A client that goes away mid-upload must not hold the import gate.
    req.on("close", () => {
      if (!req.complete) reject(new Error("the upload was cut off before its end"));
    });
  });
}

/** Reads and drops the body, so the client gets the answer rather than a reset connection. */
function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    req.on("end", resolve);
    req.on("close", resolve);
    req.resume();
  });
}
