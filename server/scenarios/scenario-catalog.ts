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

/** What each of the catalog's ops answers (kernels/mgpulab_scenarios/service.py), checked before anything uses it. */
const SCENARIO_REPLIES = { list: summarySchema, notebook: cellsSchema, render: renderedSchema };
/** What each op takes. */
interface ScenarioRequests {
  list: Record<string, never>;
  notebook: { scenario: string; params: ParameterValues };
  render: { templateId: string; params: ParameterValues };
}
type ScenarioOp = keyof ScenarioRequests;
type ScenarioReply<Op extends ScenarioOp> = z.output<(typeof SCENARIO_REPLIES)[Op]>;
/** Typed by op, so a lookup by a generic op keeps the op's own reply type. */
const REPLIES: { readonly [Op in ScenarioOp]: z.ZodType<ScenarioReply<Op>> } = SCENARIO_REPLIES;

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
    this.summaries ??= this.ask("list", {});
    this.summaries.catch(() => {
      this.summaries = null;
    });
    return this.summaries;
  }

  async notebookCells(scenarioId: string, params: ParameterValues): Promise<ScenarioCell[]> {
    const cells = await this.ask("notebook", { scenario: scenarioId, params });
    return cells.map((cell) => ({ ...cell, template: cell.template ? { ...cell.template, detached: false } : null }));
  }

  /** `templateId` rendered with `params` (all of the scenario's values, validated together). */
  async render(templateId: string, params: ParameterValues): Promise<{ source: string; template: CellTemplate }> {
    const rendered = await this.ask("render", { templateId, params });
    return { source: rendered.source, template: { ...rendered.template, detached: false } };
  }

  close(): void {
    this.service.stop();
  }

  /** The service's answer to `op`, as `op` declares it; its refusals and failures carry their codes as they are (server/errors.ts reports them). */
  private async ask<Op extends ScenarioOp>(op: Op, body: ScenarioRequests[Op]): Promise<ScenarioReply<Op>> {
    return REPLIES[op].parse(await this.service.request(op, body));
  }
}
