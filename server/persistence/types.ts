/**
 * What the repositories take and return. The JSON columns are checked on the
 * way out of the database (a row written by an older version, or by hand,
 * must not flow into the app unchecked) with the notebook model's own
 * schemas (core/protocol/notebook-schemas.ts) and the few below.
 */
import { z } from "zod";
import type { Cell, CellKind, CellOutput, CellTemplate } from "../core/protocol/notebook-model";
import type { Same } from "../core/protocol/notebook-schemas";

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
  ownerName: string;
  version: number;
  cellCount: number;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/** A notebook's kernel spec as stored: `hostId` null means the lab's default host (whichever it is when the kernel starts). */
export interface StoredKernelSpec {
  hostId: string | null;
  gpus: number;
}

/**
 * What the notebook runtime's edits state instead of a bare version
 * (notebook-persistence.ts): the version the edit was based on, its id, made
 * once per edit, and whether an attempt came before. The id is stored with
 * the notebook in the edit's transaction, so an attempt made after the
 * connection dropped during a COMMIT first reads whether that COMMIT went
 * through (NotebookRepository's edit), as group commits do.
 */
export interface EditBase {
  version: number;
  editId: string;
  retried: boolean;
}

export interface StoredNotebook extends Omit<NotebookSummary, "cellCount" | "ownerName"> {
  /** The last output/metric sequence number included in this snapshot: replay from here. */
  lastSeq: number;
  kernelSpec: StoredKernelSpec;
  cells: StoredCell[];
}

export const RUN_STATUSES = ["running", "finished", "interrupted", "died"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type EndedRunStatus = Exclude<RunStatus, "running">;

export const EXECUTION_STATUSES = ["queued", "running", "ok", "error", "interrupted", "aborted", "kernel-died", "no-kernel"] as const;
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

export interface StoredPrediction {
  questionId: string;
  userId: string;
  question: string;
  choice: string;
  afterRun: boolean;
  committedAt: Date;
}

// The schema above must describe exactly the type it checks (the model's own schemas are checked in core).
const liveTailSchemaMatches: Same<z.infer<typeof liveTailSchema>, LiveTail> = true;
void liveTailSchemaMatches;
