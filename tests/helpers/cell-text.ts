/** A cell's stream text as a viewer was shown it (event by event) and as it is stored (a snapshot). */
import assert from "node:assert/strict";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";

/** The text of a cell's stream output from these events, as the page builds it (a clear starts it over). */
export function shownText(events: NotebookEvent[], cellId: string): string {
  let text = "";
  for (const event of events) {
    if (event.type === "cell-stream" && event.cellId === cellId) text += event.text;
    if (event.type === "cell-outputs-cleared" && event.cellId === cellId) text = "";
  }
  return text;
}

/** The stream text of a cell in a snapshot of the notebook. */
export function storedText(doc: NotebookDocument, cellId: string): string {
  const cell = doc.cells.find((candidate) => candidate.id === cellId);
  assert.ok(cell, `cell ${cellId} is stored`);
  return cell.outputs.map((output) => (output.kind === "stream" ? output.text : "")).join("");
}
