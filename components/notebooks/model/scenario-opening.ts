/**
 * Opening a guided scenario: a user who already has a notebook made from it
 * is asked whether to open that copy or start a fresh one, instead of
 * silently getting a second notebook with the same name.
 */
import type { NotebookListItem } from "../../../server/core/protocol/notebook-model";
import type { LabTransport } from "../../shell/model/lab-client";

export type ScenarioOpening =
  /** Go to this notebook. */
  | { kind: "open"; notebookId: string }
  /** The user has `existing` (most recently edited copy); a fresh copy would be titled `freshTitle`. */
  | { kind: "choose"; scenarioId: string; existing: NotebookListItem; freshTitle: string }
  | { kind: "error"; error: string };

/** What opening `scenarioId` leads to: straight to a new notebook when there is no copy yet, else a choice. */
export async function openScenario(transport: LabTransport, scenarioId: string): Promise<ScenarioOpening> {
  const found = await transport.send({ op: "find-scenario-copy", scenarioId });
  if (!found.ok) return { kind: "error", error: found.error };
  if (found.notebook !== undefined) return { kind: "choose", scenarioId, existing: found.notebook, freshTitle: found.freshTitle };
  return startFreshCopy(transport, scenarioId);
}

/** A new notebook from the scenario (titled apart from every other notebook by the server). */
export async function startFreshCopy(transport: LabTransport, scenarioId: string): Promise<ScenarioOpening> {
  const created = await transport.send({ op: "create-from-scenario", scenarioId });
  if (!created.ok) return { kind: "error", error: created.error };
  return { kind: "open", notebookId: created.notebook.id };
}
