/**
 * The autosave indicator in the notebook header, decided in one place: what
 * the page says about the user's changes, from the connection and its
 * bookkeeping. The most urgent state wins: a conflict needs the user, an
 * error is worth knowing, offline says where the text is, then saving/saved.
 */
import type { ConnectionState } from "./connection";

export type SaveStatus =
  | { state: "saved" }
  | { state: "saving" }
  | { state: "offline" }
  | { state: "error"; reason: string }
  | { state: "conflict"; cells: number };

export interface SaveInputs {
  connection: ConnectionState["status"];
  /** Unacknowledged source edits plus structural commands. */
  unsaved: number;
  /** Cells whose edit the server refused because another tab changed them. */
  conflicts: number;
  /** Why the last save was refused, until a save succeeds again. */
  lastError: string | null;
}

export function saveStatus({ connection, unsaved, conflicts, lastError }: SaveInputs): SaveStatus {
  if (conflicts > 0) return { state: "conflict", cells: conflicts };
  if (unsaved === 0) return { state: "saved" };
  if (connection !== "connected") return { state: "offline" };
  if (lastError !== null) return { state: "error", reason: lastError };
  return { state: "saving" };
}

export function saveStatusText(status: SaveStatus): string {
  switch (status.state) {
    case "saved":
      return "All changes saved";
    case "saving":
      return "Saving…";
    case "offline":
      return "Offline — changes kept in this browser";
    case "error":
      return `Save failed: ${status.reason} (retrying)`;
    case "conflict":
      return status.cells === 1 ? "A cell was changed in another tab" : `${status.cells} cells were changed in another tab`;
  }
}
