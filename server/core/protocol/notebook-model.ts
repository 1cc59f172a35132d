/**
 * The notebook document as both ends see it. Pure types: imported by the
 * server, the socket API and the React components alike.
 */
import type { VerdictValue } from "./verdict-model";
import type { GpuWaitView } from "./hosts-model";

export type { GpuWaitView };

export type CellKind = "code" | "markdown";

export type MimeBundle = Record<string, string>;

export type CellOutput =
  | { kind: "stream"; name: "stdout" | "stderr"; text: string }
  | { kind: "result"; executionCount: number; data: MimeBundle }
  | { kind: "display"; data: MimeBundle }
  | { kind: "error"; ename: string; evalue: string; traceback: string[] }
  /** Output was too large to keep: `elidedBytes` characters of stream output dropped between head and tail. */
  | { kind: "elided"; elidedBytes: number }
  /** The watchdog's report on a busy cell that made no progress: every process's stack, side by side. */
  | { kind: "hang"; idleMs: number; summary: string[]; processes: ProcessStack[]; answeredBy: "kernel" | "tty" };

// A type alias, not an interface: outputs are stored as JSON and must stay index-compatible.
export type ProcessStack = {
  label: string;
  pid: number;
  alive: boolean;
  stack: string;
};

/** The latest metric values of a running (or last) cell run, one row per rank/device: the compact live view. */
export interface LiveMetrics {
  /** Metric points received for this run so far. */
  points: number;
  ranks: Array<{ rank: number; step: number; values: Record<string, number | null> }>;
}

export type CellRunState = "idle" | "queued" | "running";

/** A scenario parameter's value: only these types exist, and each is rendered into code as a Python literal. */
export type ParameterValue = string | number | boolean;

/** One field of a templated cell's parameter form (the catalog's typed parameter). */
export interface ParameterField {
  name: string;
  type: "int" | "float" | "bool" | "choice";
  default: ParameterValue;
  help: string;
  /** int and float only: inclusive bounds. */
  min?: number;
  max?: number;
  /** choice only. */
  choices?: string[];
}

/** A "predict first" question of a scenario step, filled in with the current parameter values. */
export interface PredictQuestion {
  /** "<scenario>/<step>": predictions are stored under it. */
  id: string;
  text: string;
  choices: string[];
  /** Ids of the claims this question is about: the verdict view shows the prediction beside them (and only them). */
  claims: string[];
  /**
   * Parallel to `choices`: choice i is what a run measured when every claim
   * named in `outcomes[i]` got one of the verdicts listed there ({}: no run
   * shows it). Absent on questions stored before it: then a prediction is shown, not judged.
   */
  outcomes?: Array<Record<string, VerdictValue[]>>;
}

/**
 * A cell rendered from a scenario template. While attached, its source is
 * the template rendered with `parameters` and edits go through the form;
 * detached, it is an ordinary code cell that remembers where it came from.
 */
export interface CellTemplate {
  /** "<scenario>/<cell>" */
  id: string;
  /** Every parameter of the scenario, validated: a change re-renders all attached cells of that scenario. */
  parameters: Record<string, ParameterValue>;
  detached: boolean;
  /** The parameters this cell's code uses, in form order. */
  fields: ParameterField[];
  question: PredictQuestion | null;
  /**
   * An explanation (a markdown cell) that would give a prediction away: shown
   * once the verdicts of these claims are shown, folded before. Absent: always shown.
   */
  revealAfter?: string[];
}

/** A participant's committed answer to a PredictQuestion. */
export interface Prediction {
  questionId: string;
  choice: string;
  /** Committed after the question's experiment (or the verdicts) had already run in this notebook. */
  afterRun: boolean;
  /** ISO 8601 */
  committedAt: string;
}

export interface Cell {
  id: string;
  kind: CellKind;
  source: string;
  outputs: CellOutput[];
  executionCount: number | null;
  runState: CellRunState;
  /** Latest metrics of the cell's current or last run, or null if it logged none. */
  liveMetrics: LiveMetrics | null;
  /** How the last run ended, for the cell footer. */
  lastRun: { status: ExecutionStatus; durationMs: number } | null;
  /** The current or last execution (its metrics are fetched by this id), or null if never run here. */
  executionId: string | null;
  /** Set when the cell was rendered from a scenario template. */
  template: CellTemplate | null;
}

export interface KernelInfo {
  pid: number;
  hostname: string;
  python: string;
  executable: string;
  torch: string | null;
  /** "2× cpu (no CUDA)" or "4× CUDA": honest about what ran. */
  deviceMode: string;
  /** The configured host it runs on (absent for kernels stored before hosts existed). */
  host?: { id: string; label: string };
  /** UUIDs of the GPUs leased to it (its CUDA_VISIBLE_DEVICES); empty when it asked for none. */
  gpus?: string[];
}

/**
 * How a cell's last run ended. "no-kernel": it never ran, because the kernel
 * did not start (the kernel's status says why); "aborted": it never ran,
 * because a cell before it failed or was interrupted.
 */
export type ExecutionStatus = "ok" | "error" | "interrupted" | "aborted" | "kernel-died" | "no-kernel";

/** The link to the kernel's host while it does not answer: the kernel may well be running on. */
export interface KernelLinkTrouble {
  /** "stalled": open, but nothing has come for a while; "reconnecting": closed, being opened again. */
  state: "stalled" | "reconnecting";
  host: string;
  /** Epoch ms: silent since, or closed at. */
  since: number;
}

export type KernelStatus =
  | { state: "not-started" }
  /** `queue`: waiting for GPUs on its host, at this 1-based place, and what it waits for. */
  | { state: "starting"; queue?: { position: number; host: string; gpus: number; wait?: GpuWaitView } }
  | { state: "idle"; info: KernelInfo; link?: KernelLinkTrouble }
  | { state: "busy"; info: KernelInfo; link?: KernelLinkTrouble }
  | { state: "interrupting"; info: KernelInfo; link?: KernelLinkTrouble }
  | { state: "restarting" }
  /**
   * The host had no GPU for it: no process was started, nothing died. Retry
   * (a restart) or the next run asks the host again.
   */
  | { state: "refused"; reason: string; wait: GpuWaitView }
  | { state: "dead"; reason: string; lastOutput: string }
  /** `reason` says why when the lab ended it (idle shutdown, Running kernels), null when the notebook's own user did. */
  | { state: "shutdown"; reason: string | null };

/** Where a notebook's kernels start, and how many GPUs they lease there: read at each kernel start. */
export interface KernelSpec {
  hostId: string;
  gpus: number;
}

export interface NotebookDocument {
  id: string;
  title: string;
  /** Set when the notebook was deleted while open: viewers offer to restore it. */
  deleted: boolean;
  cells: Cell[];
  kernel: KernelStatus;
  /** When idle shutdown will end the kernel if nobody uses it (ISO time), once the notebook has been warned. */
  kernelIdleShutdownAt?: string | null;
  /** Committed predictions by question id. */
  predictions: Record<string, Prediction>;
  /** The host and GPUs of the next kernel start (a running kernel keeps what it started with). */
  kernelSpec: KernelSpec;
}

/** A guided scenario as the notebook list offers it. */
export interface ScenarioSummary {
  id: string;
  title: string;
  /** The source article's file name (shared/seeds). */
  source: string;
  /** The source article's own title (carried by the scenario definition: the seeds folder is not there at run time). */
  sourceTitle: string;
  summary: string;
}

/** A notebook as the notebook list shows it. */
export interface NotebookListItem {
  id: string;
  title: string;
  /** Who owns it: the list shows others' notebooks shared with this user apart from their own. */
  owner: { id: string; name: string };
  /** What this user may do with it. */
  access: "read" | "run" | "edit";
  cellCount: number;
  /** ISO 8601 */
  updatedAt: string;
  deletedAt: string | null;
}
