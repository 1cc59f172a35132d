/**
 * .ipynb files over HTTP (too large for a socket message): import creates a
 * notebook from the request body, export downloads one. Everything else
 * falls through to Next.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { importIpynb } from "../ipynb/import";
import { exportNotebook } from "../ipynb/export";
import { IPYNB_LIMITS } from "../ipynb/limits";
import type { NotebookRepository } from "../persistence";
import { replyError, sendJson } from "./json-reply";
import { NOTEBOOK_IMPORT_PATH } from "../protocol/socket-api";

const EXPORT_PATH = /^\/api\/notebooks\/([A-Za-z0-9_-]{1,64})\/export$/;

export interface NotebookFilesOptions {
  notebooks: NotebookRepository;
  /** Draws a cell execution's charts for the export (SVG), or null without metrics. */
  chartOf?: (executionId: string) => Promise<string | null>;
  ownerId: string;
  onError: (error: unknown) => void;
}

/** Returns false when the request is not for these routes. */
export function handleNotebookFiles(req: IncomingMessage, res: ServerResponse, options: NotebookFilesOptions): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === NOTEBOOK_IMPORT_PATH) {
    if (req.method !== "POST") return sendJson(res, 405, { error: "use POST with the .ipynb file as the body" });
    void importFile(req, res, url, options).catch((error: unknown) => replyError(res, error, options.onError, "handle this file"));
    return true;
  }
  const exportMatch = EXPORT_PATH.exec(url.pathname);
  if (exportMatch) {
    if (req.method !== "GET") return sendJson(res, 405, { error: "use GET" });
    void exportFile(res, exportMatch[1]!, options).catch((error: unknown) => replyError(res, error, options.onError, "handle this file"));
    return true;
  }
  return false;
}

async function importFile(req: IncomingMessage, res: ServerResponse, url: URL, options: NotebookFilesOptions): Promise<void> {
  const body = await readBody(req, IPYNB_LIMITS.maxBytes);
  if (body === null) {
    sendJson(res, 413, { error: `the file is larger than ${IPYNB_LIMITS.maxBytes} bytes` });
    return;
  }
  const title = (url.searchParams.get("title") ?? "").trim().slice(0, 200) || "Imported notebook";
  const { notebook, notes } = await importIpynb(options.notebooks, body, { ownerId: options.ownerId, title });
  sendJson(res, 201, { id: notebook.id, title: notebook.title, notes });
}

async function exportFile(res: ServerResponse, notebookId: string, options: NotebookFilesOptions): Promise<void> {
  const { fileName, text } = await exportNotebook(options.notebooks, notebookId, options.chartOf);
  res.writeHead(200, {
    "Content-Type": "application/x-ipynb+json; charset=utf-8",
    "Content-Disposition": `attachment; filename="${fileName.replace(/[^\x20-\x7e]|"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(fileName)}`,
    "Cache-Control": "no-store",
  });
  res.end(text);
}

/** The body, or null once it passes `limit` bytes (the rest is not read into memory). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(tooLarge ? null : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
