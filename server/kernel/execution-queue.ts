/**
 * The cells of one kernel: the one running now and those waiting (one at a
 * time, in order, as in Jupyter), and which cell's sink gets each piece of
 * output (output that arrives while idle, from background threads, goes to
 * the last cell run). Separate from KernelSession, which owns the kernel
 * process and its status: this decides only about cells.
 */
import type { ExecutionStatus } from "../core/protocol/notebook-model";
import type { Execution, ExecutionSink } from "./kernel-execution";

export class ExecutionQueue {
  private readonly waiting: Execution[] = [];
  private current: Execution | null = null;
  private lastSink: ExecutionSink | null = null;

  /** The cell running now; null when none is. */
  get running(): Execution | null {
    return this.current;
  }

  /** Cells running or waiting. */
  get pending(): number {
    return this.waiting.length + (this.current ? 1 : 0);
  }

  add(execution: Execution): void {
    this.waiting.push(execution);
  }

  /** The next waiting cell starts running (null while one runs, or none waits): from now its sink gets idle output too. */
  next(): Execution | null {
    if (this.current) return null;
    const next = this.waiting.shift();
    if (!next) return null;
    this.adopt(next);
    next.startedAt = next.lastProgressAt = performance.now();
    return next;
  }

  /** A cell that is running already (under the previous lab server, for a kernel taken over). */
  adopt(execution: Execution): void {
    this.current = execution;
    this.lastSink = execution.sink;
  }

  /** The running cell is `executionId`'s no more: it ended with this result (false when it was not the one running). */
  finish(executionId: string, result: { status: ExecutionStatus; executionCount: number | null; durationMs: number }): boolean {
    const execution = this.current;
    if (!execution || execution.id !== executionId) return false;
    this.current = null;
    execution.sink.finished(result);
    return true;
  }

  /** The running cell ends as `status` (its kernel stopped or died), timed by this server's clock. */
  failRunning(status: ExecutionStatus): void {
    const execution = this.current;
    if (!execution) return;
    this.current = null;
    execution.sink.finished({ status, executionCount: null, durationMs: performance.now() - execution.startedAt });
  }

  /** Every waiting cell ends as `status` without running. */
  abortWaiting(status: ExecutionStatus = "aborted"): void {
    for (const execution of this.waiting.splice(0)) execution.sink.finished({ status, executionCount: null, durationMs: 0 });
  }

  /** Where output of `executionId` goes: its cell while it runs, else the last cell run. */
  sinkFor(executionId: string | null): ExecutionSink | null {
    if (executionId !== null && this.current?.id === executionId) return this.current.sink;
    return this.current?.sink ?? this.lastSink;
  }

  /** Nothing more reaches any cell (its kernel is gone); the running cell, if any, is forgotten without an end. */
  forget({ running }: { running: boolean }): void {
    if (running) this.current = null;
    this.lastSink = null;
  }
}
