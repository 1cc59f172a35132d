/**
 * One place that turns any failure into what a client is told: a code from
 * the core's ErrorCode union (core/errors.ts), the message, and whether the
 * failure was expected (the user's input, the notebook's state: not logged)
 * or the server's own fault (logged). The socket edge, the HTTP routes and
 * the scenario catalog's callers all go through `toClientError`; the HTTP
 * status follows from the code (`httpStatus`).
 */
import { errorMessage, type ErrorCode } from "./core/errors";
import type { SourceConflict } from "./core/protocol/socket-api";
import { isDatabaseUnreachable, isPersistenceError, type PersistenceErrorCode } from "./persistence/errors";

/** What a user is told while the database restarts or fails over (the driver's own text names internals). */
/** What a command is told when it reached this server after it closed its database (it is stopping). */
export const SERVER_STOPPING = "this lab server is stopping: nothing was changed; try again in a moment";
export const DATABASE_UNREACHABLE = "the lab's database cannot be reached right now (it may be restarting): try again in a moment";

/** A refusal the server reports as it is, with what kind of failure it is. */
export class CommandError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** set-source or execute refused: the cell changed since the edit's base (another tab). */
export class SourceConflictError extends CommandError {
  constructor(
    readonly cellId: string,
    readonly theirSource: string,
  ) {
    super("conflict", `cell ${cellId} was changed by someone else since you started editing it`);
  }
}

export interface ClientError {
  code: ErrorCode;
  error: string;
  conflict?: SourceConflict;
  /** Where in a file the problem is (an .ipynb import). */
  path?: string;
  /** Expected errors (bad input, conflicts, not found) are not logged as server faults. */
  expected: boolean;
}

const PERSISTENCE_CODES: Record<PersistenceErrorCode, ErrorCode> = {
  "not-found": "not-found",
  "version-conflict": "conflict",
  "already-exists": "conflict",
  invalid: "invalid",
};

export function toClientError(error: unknown): ClientError {
  if (error instanceof SourceConflictError) {
    return { code: error.code, error: error.message, conflict: { cellId: error.cellId, theirSource: error.theirSource }, expected: true };
  }
  if (error instanceof CommandError) return { code: error.code, error: error.message, expected: isExpected(error.code) };
  if (isPersistenceError(error)) {
    const path = "path" in error && typeof error.path === "string" ? { path: error.path } : {};
    return { code: PERSISTENCE_CODES[error.code], error: error.message, ...path, expected: true };
  }
  if (isDatabaseUnreachable(error)) return { code: "unavailable", error: DATABASE_UNREACHABLE, expected: false };
  // node-postgres's words for a pool this server closed: a command that came in while it stopped.
  if (error instanceof Error && /Cannot use a pool after calling end on the pool/.test(error.message)) return { code: "unavailable", error: SERVER_STOPPING, expected: true };
  return { code: "internal", error: errorMessage(error), expected: false };
}

/** A part of the lab that is down, and the lab's own failures, are worth a line in the server's log; the user's mistakes are not. */
function isExpected(code: ErrorCode): boolean {
  return code !== "internal" && code !== "unavailable";
}

const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  busy: 409,
  limit: 409,
  "too-large": 413,
  internal: 500,
  unavailable: 503,
};

/** The HTTP status of a failure with this code. */
export function httpStatus(code: ErrorCode): number {
  return HTTP_STATUS[code];
}

/**
 * What a form field's rule says ("a password has at least 10 characters"), for a person filling in a form:
 * the schema's own message, without the command and field names of describeInvalid.
 */
export function describeFieldRule(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues[0]?.message ?? "malformed";
}

/** "notebookId: ids are letters, …" from a zod failure. */
export function describeInvalid(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  const issue = issues[0];
  return `invalid command: ${issue ? `${issue.path.map(String).join(".") || "command"}: ${issue.message}` : "malformed"}`;
}
