/**
 * zod schemas of the notebook model (notebook-model.ts), for data that
 * crosses a boundary: stored JSON read back by the repositories, templates
 * and questions answered by the scenario catalog, cells in an imported file.
 * Each is proven equal to its type at compile time (`Same<>` below).
 */
import { z } from "zod";
import { VERDICTS } from "./verdict-model";
import type { CellOutput, CellTemplate, Cell } from "./notebook-model";

const mimeBundleSchema = z.record(z.string(), z.string());

export const cellOutputSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("stream"), name: z.enum(["stdout", "stderr"]), text: z.string() }),
  z.object({ kind: z.literal("result"), executionCount: z.number().int(), data: mimeBundleSchema }),
  z.object({ kind: z.literal("display"), data: mimeBundleSchema }),
  z.object({ kind: z.literal("error"), ename: z.string(), evalue: z.string(), traceback: z.array(z.string()) }),
  z.object({ kind: z.literal("elided"), elidedBytes: z.number().nonnegative() }),
  z.object({
    kind: z.literal("hang"),
    idleMs: z.number().nonnegative(),
    summary: z.array(z.string()),
    processes: z.array(z.object({ label: z.string(), pid: z.number().int(), alive: z.boolean(), stack: z.string() })),
    answeredBy: z.enum(["kernel", "tty"]),
  }),
]);

export const cellOutputsSchema = z.array(cellOutputSchema);

export const lastRunSchema = z
  .object({
    status: z.enum(["ok", "error", "interrupted", "aborted", "kernel-died", "no-kernel"]),
    durationMs: z.number().nonnegative(),
  })
  .nullable();

export const parameterValueSchema = z.union([z.string(), z.number(), z.boolean()]);

export const parameterFieldSchema = z.object({
  name: z.string(),
  type: z.enum(["int", "float", "bool", "choice"]),
  default: parameterValueSchema,
  help: z.string(),
  min: z.number().optional(),
  max: z.number().optional(),
  choices: z.array(z.string()).optional(),
});

export const predictQuestionSchema = z.object({
  id: z.string().min(1).max(200),
  text: z.string(),
  choices: z.array(z.string()),
  claims: z.array(z.string()),
  outcomes: z.array(z.record(z.string(), z.array(z.enum(VERDICTS)))).optional(),
});

/** What Cell.templateGuide holds: the parts of a template that only the catalog can compute. */
export const templateGuideSchema = z.object({
  fields: z.array(parameterFieldSchema),
  question: predictQuestionSchema.nullable(),
  revealAfter: z.array(z.string().max(200)).max(100).optional(),
});

export const cellTemplateSchema = z.object({
  id: z.string().min(1).max(200),
  parameters: z.record(z.string(), parameterValueSchema),
  detached: z.boolean(),
  fields: z.array(parameterFieldSchema),
  question: predictQuestionSchema.nullable(),
  revealAfter: templateGuideSchema.shape.revealAfter,
});

/** true only when A and B are the same type: a schema that drifts from its type breaks the build. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const outputSchemaMatches: Same<z.infer<typeof cellOutputSchema>, CellOutput> = true;
const lastRunSchemaMatches: Same<z.infer<typeof lastRunSchema>, Cell["lastRun"]> = true;
const templateSchemaMatches: Same<z.infer<typeof cellTemplateSchema>, CellTemplate> = true;
void outputSchemaMatches;
void lastRunSchemaMatches;
void templateSchemaMatches;
