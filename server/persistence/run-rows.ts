/**
 * Kernel runs, executions and output records as stored rows, and back: what
 * each query selects, and the checks that turn a row into the lab's types
 * (a status or payload the lab does not know is an InvalidDataError, never a
 * guess). Shared by the repository and the code that ends runs.
 */
import { z } from "zod";
import type { CellOutput } from "../core/protocol/notebook-model";
import { devicePlanSchema, type DevicePlan } from "../core/protocol/kernel-messages";
import { cellOutputSchema } from "../core/protocol/notebook-schemas";
import type { Prisma } from "./generated/client";
import { InvalidDataError } from "./errors";
import { liveTailSchema, EXECUTION_STATUSES, RUN_STATUSES, type ExecutionStatus, type ExecutionSummary, type LiveTail, type RunSummary, type SequencedOutput } from "./types";

export const runSelect = {
  id: true,
  notebookId: true,
  userId: true,
  host: true,
  deviceMode: true,
  status: true,
  exitReason: true,
  startedAt: true,
  endedAt: true,
} satisfies Prisma.KernelRunSelect;

export const executionSelect = {
  id: true,
  runId: true,
  cellId: true,
  source: true,
  executionCount: true,
  status: true,
  queuedAt: true,
  startedAt: true,
  endedAt: true,
  durationMs: true,
} satisfies Prisma.CellExecutionSelect;

export const outputSelect = { seq: true, runId: true, executionId: true, cellId: true, payload: true } satisfies Prisma.CellOutputSelect;

/** Merges adjacent stream records of the same stream, as a viewer shows them. */
export function foldOutputs(outputs: readonly CellOutput[]): CellOutput[] {
  const folded: CellOutput[] = [];
  for (const output of outputs) {
    const last = folded[folded.length - 1];
    if (output.kind === "stream" && last?.kind === "stream" && last.name === output.name) {
      folded[folded.length - 1] = { ...last, text: last.text + output.text };
    } else {
      folded.push(output);
    }
  }
  return folded;
}

/** A stored live tail as the outputs a viewer saw: the elided count, then the tail's text. */
export function liveTailOutputs(stored: Prisma.JsonValue | null): CellOutput[] {
  const parsed = liveTailSchema.safeParse(stored);
  if (stored === null || !parsed.success) return [];
  const tail: LiveTail = parsed.data;
  const outputs: CellOutput[] = tail.elidedBytes > 0 ? [{ kind: "elided", elidedBytes: tail.elidedBytes }] : [];
  for (const segment of tail.segments) outputs.push({ kind: "stream", name: segment.name, text: segment.text });
  return outputs;
}

export function toRun(row: Prisma.KernelRunGetPayload<{ select: typeof runSelect }>): RunSummary {
  const status = RUN_STATUSES.find((candidate) => candidate === row.status);
  if (!status) throw new InvalidDataError(`run ${row.id}: stored status ${JSON.stringify(row.status)} is unknown`);
  return { ...row, status };
}

export function toExecution(row: Prisma.CellExecutionGetPayload<{ select: typeof executionSelect }>): ExecutionSummary {
  const status: ExecutionStatus | undefined = EXECUTION_STATUSES.find((candidate) => candidate === row.status);
  if (!status) throw new InvalidDataError(`execution ${row.id}: stored status ${JSON.stringify(row.status)} is unknown`);
  return { ...row, status };
}

export function toSequencedOutput(row: Prisma.CellOutputGetPayload<{ select: typeof outputSelect }>): SequencedOutput {
  const parsed = cellOutputSchema.safeParse(row.payload);
  if (!parsed.success) throw new InvalidDataError(`output ${row.seq} of run ${row.runId}: stored payload is not a CellOutput`);
  return { seq: row.seq, runId: row.runId, executionId: row.executionId, cellId: row.cellId, output: parsed.data };
}

const devicePlansSchema = z.record(z.string(), devicePlanSchema);

/** A stored {tag: plan} map; anything malformed reads as no plans (the charts then say nothing rather than something wrong). */
export function parseDevicePlans(stored: Prisma.JsonValue | null): Record<string, DevicePlan> {
  const parsed = devicePlansSchema.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}
