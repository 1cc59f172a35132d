/** JSON replies shared by the HTTP routes: one shape for errors, persistence errors mapped to their status. */
import type { ServerResponse } from "node:http";
import { isPersistenceError } from "../persistence";

export function sendJson(res: ServerResponse, status: number, body: unknown): true {
  if (!res.headersSent) res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
  return true;
}

export function replyError(res: ServerResponse, error: unknown, onError: (error: unknown) => void, what: string): void {
  if (isPersistenceError(error)) {
    const status = error.code === "not-found" ? 404 : error.code === "version-conflict" ? 409 : 400;
    const path = "path" in error ? (error as { path?: unknown }).path : undefined;
    sendJson(res, status, { error: error.message, ...(path !== undefined ? { path } : {}) });
    return;
  }
  onError(error);
  sendJson(res, 500, { error: `the server failed to ${what}; see its log` });
}

/** A request the lab will not serve (wrong Host, foreign Origin, form body): the reason, as JSON. */
export function refuse(res: ServerResponse, verdict: { status: number; reason: string }): void {
  sendJson(res, verdict.status, { error: verdict.reason });
}
