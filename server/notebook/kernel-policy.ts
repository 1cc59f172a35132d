/**
 * Decisions about kernels as a whole, as pure functions over plain facts:
 * which kernel is in use, when an unused one is shut down, and whether one
 * more may start. The registry gathers the facts, the culler applies them.
 *
 * Idle means: no cell running or queued AND nobody viewing the notebook, for
 * the whole period. Network silence is not idleness (a long training cell
 * prints nothing for minutes), and neither is an open tab that does nothing
 * (its user expects the kernel's variables to be there).
 */
import { describePeriod, type RunningKernelState } from "../core/protocol/kernels-model";
import { assertNever } from "../core/assert-never";
import type { KernelStatus } from "../core/protocol/notebook-model";

export type KernelState = KernelStatus["state"];

/** What a kernel is doing, as far as idle shutdown cares. */
export type KernelUse =
  /** not-started, refused, dead or shut down: there is no process to end. */
  | { kind: "no-process" }
  /** Starting, restarting or interrupting: someone just acted on it. */
  | { kind: "changing"; state: KernelState }
  | { kind: "executing"; executions: number }
  | { kind: "viewed"; viewers: number }
  /** Idle with nobody viewing since `since` (ms). */
  | { kind: "unused"; since: number };

export interface KernelFacts {
  state: KernelState;
  /** Cells running or queued. */
  executions: number;
  /** Sockets in the notebook's room. */
  viewers: number;
  /** The kernel's last state change (it started, a cell started or finished). */
  lastActivityAt: number;
  /** When the last viewer left (or hid the tab), or null if nobody did since the server started. */
  lastViewerLeftAt: number | null;
  /** The last time the kernel's GPUs were busier than the lab's threshold; null: never seen busy (or no GPUs). */
  gpuBusyAt: number | null;
}

/** A kernel process exists (or is being started) in this state: it counts against the cap. */
export function isLive(state: KernelState): state is RunningKernelState {
  switch (state) {
    case "starting":
    case "idle":
    case "busy":
    case "interrupting":
    case "restarting":
      return true;
    case "not-started":
    case "refused":
    case "dead":
    case "shutdown":
      return false;
    default:
      return assertNever(state);
  }
}

export function kernelUse(facts: KernelFacts): KernelUse {
  if (!isLive(facts.state)) return { kind: "no-process" };
  if (facts.executions > 0 || facts.state === "busy") return { kind: "executing", executions: Math.max(1, facts.executions) };
  if (facts.state !== "idle") return { kind: "changing", state: facts.state };
  if (facts.viewers > 0) return { kind: "viewed", viewers: facts.viewers };
  // A training loop started from a background thread shows only on the GPU: its use counts as activity.
  return { kind: "unused", since: Math.max(facts.lastActivityAt, facts.lastViewerLeftAt ?? -Infinity, facts.gpuBusyAt ?? -Infinity) };
}

export type CullDecision =
  /** `shutdownAt`: when it will be shut down if nothing changes (unused kernels only). */
  | { action: "keep"; shutdownAt: number | null }
  /** Unused for long enough that the notebook is told when it will be shut down. */
  | { action: "warn"; shutdownAt: number }
  | { action: "shut-down"; idleMs: number };

/** `idleLimitMs` null: idle shutdown is off. `warnMs`: how long before the shutdown the notebook is warned. */
export function cullDecision(use: KernelUse, now: number, idleLimitMs: number | null, warnMs = 0): CullDecision {
  switch (use.kind) {
    case "no-process":
    case "changing":
    case "executing":
    case "viewed":
      return { action: "keep", shutdownAt: null };
    case "unused": {
      if (idleLimitMs === null) return { action: "keep", shutdownAt: null };
      const idleMs = now - use.since;
      const shutdownAt = use.since + idleLimitMs;
      if (idleMs >= idleLimitMs) return { action: "shut-down", idleMs };
      return idleMs >= idleLimitMs - warnMs ? { action: "warn", shutdownAt } : { action: "keep", shutdownAt };
    }
    default:
      return assertNever(use);
  }
}

/** What the notebook's viewers read once idle shutdown ended their kernel. */
export function idleShutdownReason(idleLimitMs: number): string {
  return `shut down after ${describePeriod(idleLimitMs)} idle; run a cell to start a new kernel`;
}

/** What they read when someone ended it from the Running kernels view. */
export const RUNNING_KERNELS_SHUTDOWN_REASON = "shut down from Running kernels; run a cell to start a new kernel";

/** Would this command start a kernel process (and so need a place under the cap)? */
export function startsKernel(op: "execute" | "restart", state: KernelState): boolean {
  if (isLive(state)) return false;
  // Running a cell on a dead kernel starts nothing: it is restarted on purpose only.
  return op === "restart" || state !== "dead";
}

export type Admission = { ok: true } | { ok: false; reason: string };

/** One more kernel, with `live` kernels running (or starting) of which `idle` run nothing. Never makes room by ending one. */
export function admitKernel(live: number, idle: number, max: number): Admission {
  if (live < max) return { ok: true };
  return { ok: false, reason: `this lab runs at most ${max} ${max === 1 ? "kernel" : "kernels"}; shut one down in Running kernels (${idle} idle)` };
}
