/**
 * The subset of nbformat 4 the lab imports, as zod schemas with limits on
 * every string and array. Unknown keys are ignored (other tools add their
 * own); wrong types, missing fields and oversized values are errors with a path.
 */
import { z } from "zod";
import { cellTemplateSchema, lastRunSchema } from "../core/protocol/notebook-schemas";
import type { IpynbLimits } from "./limits";
import { TextParts } from "./text-parts";

/** nbformat's multiline_string: a string or an array of strings, checked, its parts kept apart. */
function multilineParts(maxChars: number) {
  return z.unknown().transform((value, ctx): TextParts => {
    if (typeof value === "string") {
      if (value.length <= maxChars) return TextParts.of([value]);
      ctx.addIssue({ code: "custom", message: `longer than ${maxChars} characters` });
      return z.NEVER;
    }
    if (Array.isArray(value)) {
      let total = 0;
      const parts: string[] = [];
      for (const [index, line] of value.entries()) {
        if (typeof line !== "string") {
          ctx.addIssue({ code: "custom", message: `expected a string or an array of strings; item ${index} is ${describe(line)}` });
          return z.NEVER;
        }
        total += line.length;
        if (total > maxChars) {
          ctx.addIssue({ code: "custom", message: `longer than ${maxChars} characters` });
          return z.NEVER;
        }
        parts.push(line);
      }
      return TextParts.of(parts);
    }
    ctx.addIssue({ code: "custom", message: `expected a string or an array of strings, got ${describe(value)}` });
    return z.NEVER;
  });
}

/** nbformat's multiline_string, joined (sources: bounded by the cell limit, kept whole). */
function multiline(maxChars: number) {
  return multilineParts(maxChars).transform((parts) => parts.text());
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Values of JSON mime types may be any JSON: kept as their JSON text. */
function isJsonMime(mime: string): boolean {
  return /^application\/(.*\+)?json$/.test(mime);
}

export function nbformatSchema(limits: IpynbLimits) {
  // Output texts stay in parts: the importer keeps only what the output budget keeps.
  const text = multilineParts(limits.maxOutputChars);
  const boundedString = (max: number) => z.string().max(max, `longer than ${max} characters`);
  const mimeBundle = z
    .record(z.string().max(255, "a mime type has at most 255 characters"), z.unknown())
    .refine((bundle) => Object.keys(bundle).length <= limits.maxMimeTypes, `more than ${limits.maxMimeTypes} mime types`)
    .transform((bundle, ctx): Record<string, TextParts> => {
      const result: Record<string, TextParts> = {};
      for (const [mime, value] of Object.entries(bundle)) {
        if (isJsonMime(mime) && typeof value !== "string") {
          const json = JSON.stringify(value) ?? "null";
          if (json.length > limits.maxOutputChars) {
            ctx.addIssue({ code: "custom", message: `longer than ${limits.maxOutputChars} characters`, path: [mime] });
            return z.NEVER;
          }
          result[mime] = TextParts.of([json]);
          continue;
        }
        const parsed = text.safeParse(value);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: [mime, ...issue.path] });
          return z.NEVER;
        }
        result[mime] = parsed.data;
      }
      return result;
    });
  const executionCount = z.number().int("must be an integer").nonnegative().max(2 ** 31 - 1).nullable();

  const output = z.discriminatedUnion("output_type", [
    z.object({ output_type: z.literal("stream"), name: z.enum(["stdout", "stderr"]), text }),
    z.object({ output_type: z.literal("execute_result"), execution_count: executionCount, data: mimeBundle }),
    z.object({ output_type: z.literal("display_data"), data: mimeBundle }),
    z.object({
      output_type: z.literal("error"),
      ename: boundedString(limits.maxOutputChars),
      evalue: boundedString(limits.maxOutputChars),
      traceback: z.array(boundedString(limits.maxOutputChars)).max(limits.maxTracebackLines, `more than ${limits.maxTracebackLines} lines`),
    }),
  ]);

  const labMetadata = z
    .object({
      // Files exported before forms existed carry only { id, parameters }.
      template: cellTemplateSchema
        .extend({ detached: z.boolean().default(false), fields: cellTemplateSchema.shape.fields.default([]), question: cellTemplateSchema.shape.question.default(null) })
        .nullish(),
      lastRun: lastRunSchema.optional(),
      // Checked on its own by the importer (predictions.ts): a bad prediction is left out with a note, not the file refused.
      prediction: z.unknown().optional(),
    })
    .optional();

  const cellMetadata = z.object({ mgpulab: labMetadata }).optional();
  const cellId = z
    .string()
    .min(1, "a cell id cannot be empty")
    .max(64, "a cell id has at most 64 characters")
    .regex(/^[A-Za-z0-9_-]+$/, "a cell id has only letters, digits, _ and -")
    .optional();
  const source = multiline(limits.maxSourceChars);

  const cell = z.discriminatedUnion("cell_type", [
    z.object({
      cell_type: z.literal("code"),
      id: cellId,
      source,
      metadata: cellMetadata,
      execution_count: executionCount.optional(),
      outputs: z.array(output).max(limits.maxOutputsPerCell, `more than ${limits.maxOutputsPerCell} outputs`),
    }),
    z.object({ cell_type: z.literal("markdown"), id: cellId, source, metadata: cellMetadata }),
    z.object({ cell_type: z.literal("raw"), id: cellId, source, metadata: cellMetadata }),
  ]);

  return z.object({
    nbformat: z.literal(4, "only nbformat 4 notebooks can be imported"),
    nbformat_minor: z.number().int().nonnegative(),
    metadata: z
      .object({
        mgpulab: z
          .object({
            title: z.string().max(limits.maxTitleChars).optional(),
            // Predictions no cell asked when exported; each checked on its own by the importer.
            predictions: z.array(z.unknown()).max(limits.maxCells, `more than ${limits.maxCells} predictions`).optional(),
            // Where its kernels start: checked on its own by the importer (kernel-spec.ts), a bad one noted, never the file refused.
            kernelSpec: z.unknown().optional(),
          })
          .optional(),
      })
      .optional(),
    cells: z.array(cell).max(limits.maxCells, `more than ${limits.maxCells} cells`),
  });
}

export type NbformatNotebook = z.output<ReturnType<typeof nbformatSchema>>;
export type NbformatCell = NbformatNotebook["cells"][number];
export type NbformatOutput = Extract<NbformatCell, { cell_type: "code" }>["outputs"][number];
