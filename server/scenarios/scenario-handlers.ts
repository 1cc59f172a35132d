/**
 * The scenario ops (the list, an existing copy, a new copy): their handlers
 * over the scenario catalog, limited for a participant to what their
 * workshop offers. Separate from the socket edge, which only dispatches to
 * them (socket/lab-handler.ts).
 */
import { CommandError } from "../errors";
import type { ScenarioSummary } from "../core/protocol/notebook-model";
import type { Actor } from "../auth";
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

export type ScenarioOp = "list-scenarios" | "find-scenario-copy" | "create-from-scenario";

type ScenarioServices = Pick<LabServices, "hub" | "scenarios" | "access" | "workshops">;

export function scenarioHandlers(services: ScenarioServices): LabHandlerTable<ScenarioOp> {
  const { hub, scenarios, access, workshops } = services;
  return {
    "list-scenarios": async (_command, actor) => {
      const offered = await offeredScenarios(actor, services);
      return { ok: true, scenarios: (await scenarios.list()).filter((scenario) => offered === null || offered.has(scenario.id)) };
    },
    "find-scenario-copy": async (command, actor) => {
      const summary = await findScenario(actor, services, command.scenarioId);
      const existing = await hub.catalog.latestScenarioCopy(actor.userId, command.scenarioId);
      const freshTitle = await hub.catalog.freshTitle(actor.userId, summary.title);
      return existing ? { ok: true, notebook: existing, freshTitle } : { ok: true, freshTitle };
    },
    "create-from-scenario": async (command, actor) => {
      const summary = await findScenario(actor, services, command.scenarioId);
      // A participant's copy is filed under their workshop (once admitted, before the end); anybody else's needs the right to create notebooks.
      if (actor.role === "participant") await workshops.requireAdmitted(actor.userId);
      else access.gate.requireLab(actor, "create-notebook");
      const cells = await scenarios.notebookCells(command.scenarioId, command.params ?? {});
      const title = await hub.catalog.freshTitle(actor.userId, summary.title);
      return { ok: true, notebook: await hub.catalog.createWithCells(actor.userId, title, cells, actor.workshopId) };
    },
  };
}

/** The scenario ids a participant's workshop offers; null: every scenario (everyone else). */
async function offeredScenarios(actor: Actor, services: ScenarioServices): Promise<Set<string> | null> {
  if (actor.role !== "participant") return null;
  return new Set(actor.workshopId ? await services.workshops.scenarioIdsOf(actor.workshopId) : []);
}

async function findScenario(actor: Actor, services: ScenarioServices, scenarioId: string): Promise<ScenarioSummary> {
  const offered = await offeredScenarios(actor, services);
  const summary = offered === null || offered.has(scenarioId) ? (await services.scenarios.list()).find((scenario) => scenario.id === scenarioId) : undefined;
  if (!summary) throw new CommandError("not-found", `no scenario ${scenarioId}`);
  return summary;
}
