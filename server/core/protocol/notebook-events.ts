/**
 * A notebook's events: everything the server tells a viewer of a notebook, in
 * order, and where a viewer is in that order. Apart from the socket contract
 * (socket-api.ts) because the notebook ops' answers carry them too
 * (ops-notebook.ts: a joining viewer's missed events), and the contract
 * names those answers.
 */
import type { DevicePlan } from "./kernel-messages";
import type { MetricPointMessage } from "./metrics-model";
import type { Cell, CellOutput, CellRunState, CellTemplate, KernelSpec, KernelStatus, LiveMetrics, Prediction } from "./notebook-model";

/** Position in a notebook's event journal. `epoch` changes when the server's journal restarts. */
export interface JournalPosition {
  epoch: string;
  seq: number;
}

export interface SequencedEvent {
  seq: number;
  event: NotebookEvent;
}

/** Everything the server tells a viewer of a notebook, in order. */
export type NotebookEvent =
  | { type: "cell-inserted"; index: number; cell: Cell }
  | { type: "cell-deleted"; cellId: string }
  | { type: "cell-moved"; cellId: string; toIndex: number }
  | { type: "cell-source"; cellId: string; source: string; by: string }
  | { type: "cell-kind"; cellId: string; kind: Cell["kind"] }
  /** `executionId` names the execution that is queued or running (or ran last): live metric points carry it. */
  | { type: "cell-run-state"; cellId: string; runState: CellRunState; executionCount: number | null; executionId: string | null }
  /** A templated cell re-rendered, detached or reattached: its template and source together. */
  | { type: "cell-template"; cellId: string; template: CellTemplate | null; source: string }
  | { type: "prediction-committed"; prediction: Prediction }
  | { type: "cell-outputs-cleared"; cellId: string }
  | { type: "cell-output"; cellId: string; output: CellOutput }
  /** Append to the last stream output of that name (or start one). */
  | { type: "cell-stream"; cellId: string; name: "stdout" | "stderr"; text: string }
  /**
   * Output went past the head budget: the cell's first `headOutputs` outputs
   * stay; everything after them is replaced by an elided marker (when
   * `elidedBytes` > 0) and this tail (see replaceTail in core/notebook).
   */
  | { type: "cell-stream-tail"; cellId: string; elidedBytes: number; tail: Array<{ name: "stdout" | "stderr"; text: string }>; headOutputs: number }
  | { type: "cell-finished"; cellId: string; status: NonNullable<Cell["lastRun"]>["status"]; durationMs: number }
  /** Coalesced, a few times a second while a run logs metrics. */
  | { type: "cell-metrics"; cellId: string; liveMetrics: LiveMetrics }
  /** The metric messages themselves, batched, for live charts. */
  | { type: "cell-metric-points"; cellId: string; executionId: string; points: MetricPointMessage[] }
  /** The devices one variant (metric tag, "" untagged) of an execution ran on: the charts name them. */
  | { type: "cell-device-plan"; cellId: string; executionId: string; tag: string; plan: DevicePlan }
  | { type: "kernel-status"; status: KernelStatus }
  /** The next kernel start's host and GPUs. */
  | { type: "kernel-spec-changed"; spec: KernelSpec }
  /** Idle shutdown will end the kernel at `shutdownAt` (ISO time) unless it is used; null: the warning no longer holds. */
  | { type: "kernel-idle-warning"; shutdownAt: string | null }
  | { type: "notebook-renamed"; title: string }
  | { type: "notebook-deleted" }
  | { type: "notebook-restored" };
