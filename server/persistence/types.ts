/**
 * What the repositories take and return, and the zod schemas that check the
 * JSON columns on the way out of the database (a row written by an older
 * version, or by hand, must not flow into the app unchecked).
 */
import { z } from "zod";
import type { Cell, CellKind, CellOutput, CellTemplate } from "../protocol/notebook-model";

export type { CellTemplate };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

export type LastRun = Cell["lastRun"];
export type LastRunStatus = NonNullable<LastRun>["status"];

/** A cell as stored: the protocol's Cell (runState is always "idle" when loaded). */
export type StoredCell = Cell;

/**
 * A cell to save. Omitted fields keep their stored value (a new cell gets
 * no outputs, no execution count, no last run, no template).
 */
export interface CellInput {
  id: string;
  kind: CellKind;
  source: string;
  outputs?: CellOutput[];
  executionCount?: number | null;
  lastRun?: LastRun;
  template?: CellTemplate | null;
}

export interface NotebookSummary {
  id: string;
  title: string;
  ownerId: string;
  version: number;
  cellCount: number;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export interface StoredNotebook extends Omit<NotebookSummary, "cellCount"> {
  /** The last output/metric sequence number included in this snapshot: replay from here. */
  lastSeq: number;
  cells: StoredCell[];
}

export const RUN_STATUSES = ["running", "finished", "interrupted", "died"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type EndedRunStatus = Exclude<RunStatus, "running">;

export const EXECUTION_STATUSES = ["queued", "running", "ok", "error", "interrupted", "aborted", "kernel-died"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export interface RunSummary {
  id: string;
  notebookId: string;
  userId: string | null;
  host: string;
  deviceMode: string;
  status: RunStatus;
  exitReason: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

export interface ExecutionSummary {
  id: string;
  runId: string;
  cellId: string;
  source: string;
  executionCount: number | null;
  status: ExecutionStatus;
  queuedAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  durationMs: number | null;
}

/** One output record with its place in the notebook's sequence. */
export interface SequencedOutput {
  seq: number;
  runId: string;
  executionId: string;
  cellId: string;
  output: CellOutput;
}

/** A metric message as the kernel sends it (kernel-messages.ts), minus the frame type. */
export interface MetricInput {
  /** The message's own runId: an experiment variant inside the kernel. */
  tag?: string;
  /** The cell execution running when the message arrived ("" or absent: none). */
  executionId?: string;
  rank: number;
  step: number;
  values: Record<string, number | null>;
}

export interface SequencedMetric extends Required<MetricInput> {
  seq: number;
}

/** One series, columnar: index i of each array is one point, in sequence order. */
export interface MetricSeriesData {
  tag: string;
  name: string;
  rank: number;
  seq: number[];
  step: number[];
  value: Array<number | null>;
}

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

/** The tail of a flooding cell's stream output, as its viewers were shown it (see OutputRecorder). */
// A type alias (not an interface) so that it is a Prisma JSON value as it is.
export type LiveTail = {
  elidedBytes: number;
  segments: Array<{ name: "stdout" | "stderr"; text: string }>;
};

export const liveTailSchema = z.object({
  elidedBytes: z.number().int().nonnegative(),
  segments: z.array(z.object({ name: z.enum(["stdout", "stderr"]), text: z.string() })),
});

export const lastRunSchema = z
  .object({
    status: z.enum(["ok", "error", "interrupted", "aborted", "kernel-died"]),
    durationMs: z.number().nonnegative(),
  })
  .nullable();

const parameterValueSchema = z.union([z.string(), z.number(), z.boolean()]);

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
});

/** What Cell.templateGuide holds: the parts of a template that only the catalog can compute. */
export const templateGuideSchema = z.object({
  fields: z.array(parameterFieldSchema),
  question: predictQuestionSchema.nullable(),
});

export const cellTemplateSchema = z.object({
  id: z.string().min(1).max(200),
  parameters: z.record(z.string(), parameterValueSchema),
  detached: z.boolean(),
  fields: z.array(parameterFieldSchema),
  question: predictQuestionSchema.nullable(),
});

export interface StoredPrediction {
  questionId: string;
  userId: string;
  question: string;
  choice: string;
  afterRun: boolean;
  committedAt: Date;
}

// The schemas above must describe exactly the protocol's types.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const outputSchemaMatches: Same<z.infer<typeof cellOutputSchema>, CellOutput> = true;
const liveTailSchemaMatches: Same<z.infer<typeof liveTailSchema>, LiveTail> = true;
const lastRunSchemaMatches: Same<z.infer<typeof lastRunSchema>, LastRun> = true;
const templateSchemaMatches: Same<z.infer<typeof cellTemplateSchema>, CellTemplate> = true;
void outputSchemaMatches;
void lastRunSchemaMatches;
void templateSchemaMatches;
void liveTailSchemaMatches;
