/**
 * The scenario catalog lives in Python (kernels/mgpulab_scenarios); the
 * server asks its long-lived service for the list, for a scenario rendered
 * as notebook cells, and for one template re-rendered with new values.
 * Parameter values are validated by the catalog itself (types, ranges,
 * cross-parameter limits, literal rendering) before any code exists.
 */
import { z } from "zod";
import { chooseInterpreter } from "../kernel/python-interpreter";
import type { CellTemplate, ParameterValue, ScenarioSummary } from "../core/protocol/notebook-model";
import { parameterFieldSchema, parameterValueSchema, predictQuestionSchema, templateGuideSchema } from "../core/protocol/notebook-schemas";
import { ScenarioService } from "./scenario-service";

const summarySchema = z.array(z.object({ id: z.string(), title: z.string(), source: z.string(), sourceTitle: z.string(), summary: z.string() }));
const templateSchema = z.object({
  id: z.string(),
  parameters: z.record(z.string(), parameterValueSchema),
  fields: z.array(parameterFieldSchema),
  question: predictQuestionSchema.nullable(),
  revealAfter: templateGuideSchema.shape.revealAfter,
});
const cellsSchema = z.array(z.object({ kind: z.enum(["code", "markdown"]), source: z.string(), template: templateSchema.nullable() }));
const renderedSchema = z.object({ source: z.string(), template: templateSchema });

export interface ScenarioCell {
  kind: "code" | "markdown";
  source: string;
  template: CellTemplate | null;
}

export type ParameterValues = Record<string, ParameterValue>;

export class ScenarioCatalog {
  private summaries: Promise<ScenarioSummary[]> | null = null;
  private readonly service: ScenarioService;

  constructor(python = chooseInterpreter().executable) {
    this.service = new ScenarioService(python);
  }

  list(): Promise<ScenarioSummary[]> {
    this.summaries ??= this.ask("list", {}).then((result) => summarySchema.parse(result));
    this.summaries.catch(() => {
      this.summaries = null;
    });
    return this.summaries;
  }

  async notebookCells(scenarioId: string, params: ParameterValues): Promise<ScenarioCell[]> {
    const cells = cellsSchema.parse(await this.ask("notebook", { scenario: scenarioId, params }));
    return cells.map((cell) => ({ ...cell, template: cell.template ? { ...cell.template, detached: false } : null }));
  }

  /** `templateId` rendered with `params` (all of the scenario's values, validated together). */
  async render(templateId: string, params: ParameterValues): Promise<{ source: string; template: CellTemplate }> {
    const rendered = renderedSchema.parse(await this.ask("render", { templateId, params }));
    return { source: rendered.source, template: { ...rendered.template, detached: false } };
  }

  close(): void {
    this.service.stop();
  }

  /** The service's answer; its refusals and failures carry their codes as they are (server/errors.ts reports them). */
  private ask(op: string, body: Record<string, unknown>): Promise<unknown> {
    return this.service.request(op, body);
  }
}
