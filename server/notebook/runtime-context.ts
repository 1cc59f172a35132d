/**
 * What the parts of a notebook runtime share (execution recording, the
 * kernel takeover, template work, command dispatch): the current document,
 * the one way to change it (events through the coalescer, numbered and held
 * until stored by the runtime), and storage. Separate so each part depends
 * on this narrow view rather than on NotebookRuntime and its other parts.
 */
import type { Cell, NotebookDocument } from "../core/protocol/notebook-model";
import type { KernelSession } from "../kernel/kernel-session";
import type { EventCoalescer } from "./event-coalescer";
import type { NotebookPersistence, RunKernel } from "./persistence-contract";

export interface RuntimeContext {
  /** The document as of the last event numbered. */
  readonly doc: NotebookDocument;
  readonly events: EventCoalescer;
  readonly persistence: NotebookPersistence;
}

/** What the parts read of the kernel session to describe where a run is. */
export type KernelView = Pick<KernelSession, "status" | "placement" | "host">;

export function cellOf(doc: NotebookDocument, cellId: string): Cell | undefined {
  return doc.cells.find((cell) => cell.id === cellId);
}

/** The cell's run state, with its execution count and id as they are unless `changes` says otherwise. */
export function setRunState(ctx: RuntimeContext, cellId: string, runState: Cell["runState"], changes: { executionCount?: number | null; executionId?: string } = {}): void {
  const cell = cellOf(ctx.doc, cellId);
  const executionCount = changes.executionCount !== undefined ? changes.executionCount : (cell?.executionCount ?? null);
  const executionId = changes.executionId ?? cell?.executionId ?? null;
  ctx.events.emit({ type: "cell-run-state", cellId, runState, executionCount, executionId });
}

/** The kernel a run is stored on, as far as it is known (before it is up: where it is being started). */
export function runKernel(kernel: KernelView, doc: NotebookDocument): RunKernel {
  const status = kernel.status;
  const placement = kernel.placement;
  return {
    info: "info" in status ? status.info : null,
    host: kernel.host?.id ?? doc.kernelSpec.hostId,
    agent: placement?.agentKernelId ? { hostId: placement.hostId, agentKernelId: placement.agentKernelId } : null,
  };
}
