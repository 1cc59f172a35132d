/** One place that turns any failure into what a client is told. */
import { isPersistenceError } from "../persistence";
import { CommandError } from "../notebook/notebook-ops";
import { SourceConflictError } from "../notebook/notebook-runtime";
import type { SourceConflict } from "../core/protocol/socket-api";

export interface ClientError {
  error: string;
  conflict?: SourceConflict;
  /** Expected errors (bad input, conflicts, not found) are not logged as server faults. */
  expected: boolean;
}

export function toClientError(error: unknown): ClientError {
  if (error instanceof SourceConflictError) {
    return { error: error.message, conflict: { cellId: error.cellId, theirSource: error.theirSource }, expected: true };
  }
  if (error instanceof CommandError || isPersistenceError(error)) return { error: (error as Error).message, expected: true };
  return { error: error instanceof Error ? error.message : String(error), expected: false };
}

/** "notebookId: ids are letters, …" from a zod failure. */
export function describeInvalid(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  const issue = issues[0];
  return `invalid command: ${issue ? `${issue.path.map(String).join(".") || "command"}: ${issue.message}` : "malformed"}`;
}
