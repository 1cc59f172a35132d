/**
 * The Running kernels view as both ends see it: every live kernel of this
 * server, answered to `list-kernels`. Pure types, and the one way both ends
 * say a period.
 */
import type { KernelStatus } from "./notebook-model";

/** The states in which a kernel process exists (or is being started). */
export type RunningKernelState = Extract<KernelStatus["state"], "starting" | "idle" | "busy" | "interrupting" | "restarting">;

export interface RunningKernel {
  notebookId: string;
  title: string;
  state: RunningKernelState;
  /** The kernel's process on this machine; null while it starts. */
  pid: number | null;
  /** ISO 8601: when this kernel process was started. */
  startedAt: string;
  /** ISO 8601: its last state change (a cell started or finished, it started). */
  lastActivityAt: string;
  /** Browser tabs that have the notebook open. */
  viewers: number;
  /** Cells running or queued. */
  executions: number;
  /** See RunningKernels.memoryMethod; null when not measured (no /proc, or the process just exited). */
  memory: { rssBytes: number; processes: number } | null;
  /** ISO 8601: when idle shutdown will end it if it stays unused; null while in use or with idle shutdown off. */
  idleShutdownAt: string | null;
}

export interface RunningKernels {
  kernels: RunningKernel[];
  /** At most this many kernels run at once on this server. */
  maxKernels: number;
  /** Unused kernels are shut down after this long; null when idle shutdown is off. */
  idleShutdownMs: number | null;
  /** How `memory` is measured, in words the page shows. */
  memoryMethod: string;
}

/**
 * A running kernel as one viewer is shown it. A notebook they may not read (only an admin lists those: a
 * held GPU is everyone's problem) is named by its owner alone: no title, no id.
 */
export interface ListedKernel extends Omit<RunningKernel, "notebookId"> {
  /** Null: a notebook this viewer may not read; `title` then only says whose it is. */
  notebookId: string | null;
  /** Opaque and stable: what the kernel is shut down by when its notebook is not the viewer's to name. */
  kernelRef: string;
}

export interface KernelListing extends Omit<RunningKernels, "kernels"> {
  kernels: ListedKernel[];
}

/** 3_600_000 → "60 min", 90_000 → "1.5 min", 2_000 → "2 s": the configured idle period as a person would say it. */
export function describePeriod(ms: number): string {
  if (ms >= 60_000) return `${Number((ms / 60_000).toFixed(1))} min`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}
