/** JSON replies shared by the HTTP routes: one shape for errors, `{ error, code }`, with the status that follows from the code. */
import type { ServerResponse } from "node:http";
import type { ErrorCode } from "../core/errors";
import { httpStatus, toClientError } from "../errors";

export function sendJson(res: ServerResponse, status: number, body: unknown): true {
  if (!res.headersSent) res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
  return true;
}

/** A refusal this route makes itself; the status follows from the code unless the protocol says otherwise (405). */
export function sendError(res: ServerResponse, code: ErrorCode, error: string, status = httpStatus(code)): true {
  return sendJson(res, status, { error, code });
}

/** Whatever a route threw, through the one converter: a user's error as it is, the server's own fault logged and not detailed. */
export function replyError(res: ServerResponse, error: unknown, onError: (error: unknown) => void, what: string): void {
  const failure = toClientError(error);
  if (!failure.expected) onError(error);
  const message = failure.code === "internal" ? `the server failed to ${what}; see its log` : failure.error;
  sendJson(res, httpStatus(failure.code), { error: message, code: failure.code, ...(failure.path !== undefined ? { path: failure.path } : {}) });
}

/** A request the lab will not serve (wrong Host, foreign Origin, form body): the reason, as JSON. */
export function refuse(res: ServerResponse, verdict: { status: number; reason: string }): void {
  sendError(res, verdict.status === 403 ? "forbidden" : "invalid", verdict.reason, verdict.status);
}
