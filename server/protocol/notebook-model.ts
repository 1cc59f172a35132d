/**
 * The notebook document as both ends see it. Pure types: imported by the
 * server, the socket API and the React components alike.
 */
export type CellKind = "code" | "markdown";

export type MimeBundle = Record<string, string>;

export type CellOutput =
  | { kind: "stream"; name: "stdout" | "stderr"; text: string }
  | { kind: "result"; executionCount: number; data: MimeBundle }
  | { kind: "display"; data: MimeBundle }
  | { kind: "error"; ename: string; evalue: string; traceback: string[] }
  /** Output was too large to keep: `elidedBytes` of stream output dropped between head and tail. */
  | { kind: "elided"; elidedBytes: number };

export type CellRunState = "idle" | "queued" | "running";

export interface Cell {
  id: string;
  kind: CellKind;
  source: string;
  outputs: CellOutput[];
  executionCount: number | null;
  runState: CellRunState;
  /** How the last run ended, for the cell footer. */
  lastRun: { status: "ok" | "error" | "interrupted" | "aborted" | "kernel-died"; durationMs: number } | null;
}

export interface KernelInfo {
  pid: number;
  hostname: string;
  python: string;
  executable: string;
  torch: string | null;
  /** "2× cpu (no CUDA)" or "4× CUDA": honest about what ran. */
  deviceMode: string;
}

export type KernelStatus =
  | { state: "not-started" }
  | { state: "starting" }
  | { state: "idle"; info: KernelInfo }
  | { state: "busy"; info: KernelInfo }
  | { state: "interrupting"; info: KernelInfo }
  | { state: "restarting" }
  | { state: "dead"; reason: string; lastOutput: string }
  | { state: "shutdown" };

export interface NotebookDocument {
  id: string;
  title: string;
  cells: Cell[];
  kernel: KernelStatus;
}
