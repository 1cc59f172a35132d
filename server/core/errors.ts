/**
 * What kind of failure an error is: every error the lab reports, over the
 * socket or HTTP, carries one of these codes next to its message, and the
 * browser branches on the code, never on the message's words.
 */
export const ERROR_CODES = [
  /** The request is malformed, or asks for something that can never work (a bad value, the wrong kind of cell). */
  "invalid",
  /** It names something that does not exist (a notebook, cell, scenario, question, execution). */
  "not-found",
  /** It clashes with the current state, changed elsewhere or earlier (edited in another tab, already committed, already attached). */
  "conflict",
  /** What it needs is in use now (a queued or running cell): it can work once that is over. */
  "busy",
  /** It is larger than the lab takes (a message, a file). */
  "too-large",
  /** A count the lab caps is reached (cells in a notebook, kernels running). */
  "limit",
  /** A part of the lab it needs is not running or not answering (the scenario catalog, the server): try again later. */
  "unavailable",
  /** No session, or one that expired, was signed out or revoked: sign in (again). */
  "unauthorized",
  /** Whoever or wherever it came from may not drive this lab. */
  "forbidden",
  /** The lab failed: not the request's fault (the server's log says more). */
  "internal",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

/** What a thrown value says, for a log line or a message: an Error's message, anything else as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The same with the stack where there is one: for what an operator reads when the server fails or will not start. */
export function errorDetail(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
