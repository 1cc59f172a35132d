/**
 * Typed persistence errors. The one converter (server/errors.ts) maps them
 * to the client's error codes at the boundary (`not-found`; `version-conflict`
 * and `already-exists` are a conflict; `invalid`).
 */
export type PersistenceErrorCode = "not-found" | "version-conflict" | "already-exists" | "invalid";

export abstract class PersistenceError extends Error {
  abstract readonly code: PersistenceErrorCode;
}

export class NotFoundError extends PersistenceError {
  override readonly name: string = "NotFoundError";
  readonly code = "not-found";
  constructor(readonly what: "notebook" | "cell" | "run" | "execution" | "user", readonly id: string, detail = "") {
    super(`${what} ${id} not found${detail ? ` (${detail})` : ""}`);
  }
}

/** The writer saw `expectedVersion`, but the notebook is at `currentVersion`: reload and retry. */
export class VersionConflictError extends PersistenceError {
  override readonly name: string = "VersionConflictError";
  readonly code = "version-conflict";
  constructor(readonly notebookId: string, readonly expectedVersion: number, readonly currentVersion: number) {
    super(`notebook ${notebookId} is at version ${currentVersion}, not ${expectedVersion}: it was changed elsewhere`);
  }
}

/** A record that is written once already exists (a committed prediction). */
export class AlreadyExistsError extends PersistenceError {
  override readonly name: string = "AlreadyExistsError";
  readonly code = "already-exists";
}

export class InvalidDataError extends PersistenceError {
  override readonly name: string = "InvalidDataError";
  readonly code = "invalid";
}

/**
 * A group commit refused because another lab server drives the notebook now (it took the lease over):
 * what this server saw of the kernel's output is the new driver's to store, from the read position
 * stored before it took over, so storing it here too would store it twice.
 */
export class NotDrivingError extends Error {
  override readonly name: string = "NotDrivingError";
  constructor(
    readonly notebookId: string,
    readonly driver: string,
  ) {
    super(`lab server ${driver} drives notebook ${notebookId} now: this server's writes for it are refused`);
  }
}

export function isPersistenceError(error: unknown): error is PersistenceError {
  return error instanceof PersistenceError;
}

/** Prisma's codes for a database it cannot reach or that dropped the connection (not the statement's own errors). */
const UNREACHABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1017"]);
/** PostgreSQL SQLSTATEs of a server going away or not there yet: connection exceptions (08…), admin or crash shutdown, starting up. */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P01|57P02|57P03)$/;
/** What the driver adapter calls a lost or refused connection. */
const UNREACHABLE_ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TlsConnectionError"]);
/** node-postgres's own words when a pooled connection died under a transaction, and the socket's errors. */
const UNREACHABLE_MESSAGE = /connection error and is not queryable|Connection terminated|ECONNREFUSED|ECONNRESET|EPIPE/;

function field(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  const found: unknown = Reflect.get(value, key);
  return found;
}

/**
 * The database could not be reached, or dropped the connection, before the
 * statement or transaction completed (a PostgreSQL restart or failover):
 * nothing of it was stored, and the same write can be tried again once the
 * database is back. The write's own failures (a constraint, bad data, a
 * version conflict) are not this.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  const code = field(error, "code");
  // node-postgres's own errors carry the SQLSTATE as their code (the lab's prepared statements, sql.ts, use its pool directly).
  if (typeof code === "string" && (UNREACHABLE_PRISMA_CODES.has(code) || /^E(CONNREFUSED|CONNRESET|PIPE)$/.test(code) || UNREACHABLE_SQLSTATE.test(code))) return true;
  const cause = field(field(field(error, "meta"), "driverAdapterError"), "cause");
  for (const key of ["originalCode", "code"]) {
    const sqlState = field(cause, key);
    if (typeof sqlState === "string" && UNREACHABLE_SQLSTATE.test(sqlState)) return true;
  }
  const kind = field(cause, "kind");
  if (typeof kind === "string" && UNREACHABLE_ADAPTER_KINDS.has(kind)) return true;
  const message = field(error, "message");
  return typeof message === "string" && UNREACHABLE_MESSAGE.test(message);
}

/** Prisma's unique-constraint violation (P2002), whatever the driver adapter. */
export function isUniqueViolation(error: unknown): boolean {
  return field(error, "code") === "P2002";
}
