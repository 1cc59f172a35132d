/**
 * Taking over this notebook's kernel from the previous lab server: the run
 * goes on, a cell that was running keeps running and shows everything it
 * printed meanwhile, and the cells the previous server had queued run here
 * next, in order, each under its stored execution. Separate from the runtime
 * because it happens once, at startup, with its own stored inputs.
 */
import type { CellOutput, KernelInfo } from "../core/protocol/notebook-model";
import { sourceHash } from "../core/protocol/source-hash";
import type { ExecutionSink, KernelSession } from "../kernel/kernel-session";
import type { ExecutionRecording } from "./execution-recording";
import type { KernelHosts } from "./kernel-hosts";
import { cellOf, setRunState, type RuntimeContext } from "./runtime-context";

/** A cell the previous server had queued (stored when queued). */
export interface QueuedExecution {
  id: string;
  cellId: string;
  source: string;
}

/** The previous server's run, as stored. */
export interface TakenOverRun {
  id: string;
  hostId: string;
  agentKernelId: string;
  agentSeq: number;
  info: KernelInfo;
  running: { id: string; cellId: string; outputs: CellOutput[]; executionCount: number | null; startedAt: Date | null } | null;
  /** Cells the previous server had queued behind it (stored when queued): they run here next, in order. */
  queued?: QueuedExecution[];
}

export interface TakeoverParts {
  ctx: RuntimeContext;
  kernel: Pick<KernelSession, "resume" | "execute">;
  hosts: Pick<KernelHosts, "launcher">;
  recording: ExecutionRecording;
}

/** False when the kernel is gone (the caller ends the run); nothing stored is shown twice. */
export async function takeOverKernel(parts: TakeoverParts, run: TakenOverRun): Promise<boolean> {
  const { ctx, kernel, recording } = parts;
  const host = parts.hosts.launcher(run.hostId);
  if (!host) return false;
  ctx.persistence.runResumed(run.id);
  let sink: ExecutionSink | null = null;
  const running = run.running;
  const cell = running ? cellOf(ctx.doc, running.cellId) : undefined;
  if (running && cell) {
    const record = ctx.persistence.executionResumed(running.id, running.cellId);
    recording.adoptRunning(cell.id, running.id, running.outputs, record);
    setRunState(ctx, cell.id, "running", { executionId: running.id, executionCount: running.executionCount });
    sink = recording.sinkFor(cell.id, running.id, sourceHash(cell.source), record);
  }
  // Shown queued from the first moment the runtime is seen, as on the previous server: a page that opens while
  // the kernel is being taken over must not show them idle, as if their run had ended.
  const queued = run.queued ?? [];
  for (const execution of queued) if (cellOf(ctx.doc, execution.cellId)) setRunState(ctx, execution.cellId, "queued");
  const resumed = await kernel.resume(host, run.agentKernelId, run.agentSeq, run.info, sink && running ? { executionId: running.id, sink, startedAt: running.startedAt } : null);
  if (!resumed && cell) {
    recording.adoptionFailed();
    setRunState(ctx, cell.id, "idle");
  }
  if (resumed) requeue(parts, queued);
  else for (const execution of queued) if (cellOf(ctx.doc, execution.cellId)?.runState === "queued") setRunState(ctx, execution.cellId, "idle");
  return resumed;
}

/** The previous server's queue, taken over (its cells already shown queued): each runs the code it was asked to run, under its stored execution. */
function requeue({ ctx, kernel, recording }: TakeoverParts, queued: QueuedExecution[]): void {
  for (const execution of queued) {
    const cell = cellOf(ctx.doc, execution.cellId);
    ctx.persistence.executionQueued({ id: execution.id, cellId: execution.cellId, source: execution.source, template: cell?.template ?? null }, { stored: true });
    if (!cell) {
      // Deleted meanwhile: nothing to run it in.
      ctx.persistence.queuedExecutionEnded(execution.id, { status: "aborted", executionCount: null, outputs: [] });
      continue;
    }
    if (cell.runState !== "queued") setRunState(ctx, cell.id, "queued");
    kernel.execute(execution.source, recording.sinkFor(cell.id, execution.id, sourceHash(execution.source)), { cellId: cell.id, executionId: execution.id });
  }
}
