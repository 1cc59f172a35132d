/**
 * One cell's run as the kernel session handles it: where its output goes
 * (ExecutionSink), which notebook execution it is (ExecutionRef), and the
 * session's record of it while it waits and runs. Separate from
 * KernelSession so the runtime, the watchdog and the session share these
 * types without depending on the session itself.
 */
import type { ExecutionStatus } from "../core/protocol/notebook-model";
import type { KernelMessageOf } from "../core/protocol/kernel-messages";
import type { ProcessStack } from "./stack-summary";

export type ExecutionOutput = KernelMessageOf<"stream" | "execute_result" | "display_data" | "error">;

/** What the watchdog found when a busy cell made no progress for a while. */
export interface HangReport {
  idleMs: number;
  processes: ProcessStack[];
  /** One line per process: "rank 0: in all_reduce (distributed_c10d.py:1534)". */
  summary: string[];
  /** "kernel": the kernel answered with every process's stack; "tty": it did not, Ctrl-\ printed what it could. */
  answeredBy: "kernel" | "tty";
}

export interface ExecutionSink {
  started(): void;
  /** The watchdog's report; the cell keeps running until the user interrupts or restarts. */
  hang?(report: HangReport): void;
  console(text: string): void;
  output(message: ExecutionOutput): void;
  finished(result: { status: ExecutionStatus; executionCount: number | null; durationMs: number }): void;
}

/** Which notebook cell, and which of its executions, a run is: the kernel tells library code (scenario evidence records it). */
export interface ExecutionRef {
  cellId: string;
  executionId: string;
}

export interface Execution {
  id: string;
  code: string;
  ref: ExecutionRef | null;
  sink: ExecutionSink;
  startedAt: number;
  /** The kernel said "busy" for it: an interrupt now reaches its code. */
  acknowledged: boolean;
  interruptPending: boolean;
  lastProgressAt: number;
  /** The watchdog reported this quiet period already; progress clears it. */
  diagnosed: boolean;
  /** Shown in the cell before its output (a new kernel was started for it: see restartNotice). */
  notice?: string;
}

/** What a cell says first when running it started a new kernel because the previous one had stopped. */
export function restartNotice(reason: string): string {
  const why = reason.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return `[kernel] The previous kernel stopped (${why}). Running this cell started a new one: variables and imports from before are gone.\n`;
}
