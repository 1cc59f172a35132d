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

export function isPersistenceError(error: unknown): error is PersistenceError {
  return error instanceof PersistenceError;
}
