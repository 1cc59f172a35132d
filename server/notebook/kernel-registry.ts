/**
 * Every open notebook's kernel seen together: when each started and last
 * did something, who is viewing each notebook, the cap on how many run at
 * once, and shutting them down. The hub registers each runtime it opens and
 * reports viewers joining and leaving; the Running kernels view and the idle
 * culler read from here. Decisions are kernel-policy.ts's.
 */
import type { KernelSession } from "../kernel/kernel-session";
import { MEMORY_METHOD, ProcessTable } from "../kernel/process-memory";
import type { RunningKernel, RunningKernels } from "../core/protocol/kernels-model";
import type { KernelStatus } from "../core/protocol/notebook-model";
import { admitKernel, cullDecision, isLive, kernelUse, type KernelFacts } from "./kernel-policy";
import { CommandError } from "../errors";
import type { KernelCapacity } from "../kernel-capacity";

/** What the registry needs of an open notebook (a NotebookRuntime). */
export interface KernelOwner {
  /** `kernelSpec`: the host a kernel starts on before it has a placement (a kernel waiting for GPUs). */
  readonly doc: { readonly title: string; readonly kernelSpec?: { readonly hostId: string } };
  readonly kernel: Pick<KernelSession, "status" | "pid" | "pendingExecutions" | "onStatus" | "shutdown" | "placement">;
  /** Tell the notebook when idle shutdown will end its kernel (null: not any more). */
  warnIdle(shutdownAt: number | null): void;
}

export interface KernelLimits {
  /** At most this many kernels live at once; one more is refused, none is ended to make room. */
  maxKernels: number;
  /** Where `maxKernels` comes from (the setting, or the machine's memory and cores); absent in tests that set it. */
  capacity?: KernelCapacity;
  /** Unused kernels (nothing running or queued, no GPU use, nobody viewing) are shut down after this long; null: never. */
  idleShutdownMs: number | null;
  /** The notebook is warned this long before (default 5 min, at most the period). */
  idleWarningMs?: number;
  /** GPU utilisation (percent) above which a kernel counts as in use (default 5). */
  gpuBusyPercent?: number;
}

export const DEFAULT_KERNEL_LIMITS: KernelLimits = { maxKernels: 16, idleShutdownMs: 60 * 60_000, idleWarningMs: 5 * 60_000, gpuBusyPercent: 5 };

/** A kernel's GPU utilisation (highest of its GPUs, percent) as its host last measured it; null without GPUs or a measurement. */
export type GpuUtilizationOf = (placement: { hostId: string; agentKernelId: string | null }) => number | null;

interface Tracked {
  owner: KernelOwner;
  /** When the current kernel process was started (ms since the epoch). */
  startedAt: number;
  lastActivityAt: number;
  /** Commands between "may start a kernel" and the kernel reporting "starting": they hold a place under the cap. */
  claims: number;
  stopping: Promise<void> | null;
  gpuBusyAt: number | null;
  /** The shutdown time the notebook was last warned of; null when it is not warned. */
  warnedOf: number | null;
}

export class KernelRegistry {
  private readonly tracked = new Map<string, Tracked>();
  /** Socket ids in each notebook's room, and whether their tab is visible (a hidden, forgotten tab is not viewing). */
  private readonly viewers = new Map<string, Map<string, boolean>>();
  private readonly lastViewerLeftAt = new Map<string, number>();
  private gpuUtilizationOf: GpuUtilizationOf = () => null;

  constructor(readonly limits: KernelLimits, private readonly clock: () => number = Date.now) {}

  /** Where GPU utilisation comes from (the hosts' agents). */
  measureGpusWith(source: GpuUtilizationOf): void {
    this.gpuUtilizationOf = source;
  }

  track(notebookId: string, owner: KernelOwner): void {
    const now = this.clock();
    const tracked: Tracked = { owner, startedAt: now, lastActivityAt: now, claims: 0, stopping: null, gpuBusyAt: null, warnedOf: null };
    this.tracked.set(notebookId, tracked);
    owner.kernel.onStatus((status) => {
      const at = this.clock();
      if (status.state === "starting" || status.state === "restarting") tracked.startedAt = at;
      tracked.lastActivityAt = at;
      tracked.warnedOf = null; // the runtime clears the notebook's warning on any change; a new idle period warns anew
    });
  }

  /** The notebook's runtime is gone from this server (another server drives it now). */
  untrack(notebookId: string): void {
    this.tracked.delete(notebookId);
  }

  viewerJoined(notebookId: string, socketId: string): void {
    let sockets = this.viewers.get(notebookId);
    if (!sockets) this.viewers.set(notebookId, (sockets = new Map()));
    sockets.set(socketId, true);
  }

  viewerLeft(notebookId: string, socketId: string): void {
    const sockets = this.viewers.get(notebookId);
    const wasVisible = sockets?.get(socketId);
    if (!sockets?.delete(socketId)) return;
    if (sockets.size === 0) this.viewers.delete(notebookId);
    if (wasVisible) this.lastViewerLeftAt.set(notebookId, this.clock());
  }

  /** A viewer's tab was hidden or shown again (the Page Visibility API): a hidden tab does not keep a kernel in use. */
  viewerVisibility(notebookId: string, socketId: string, visible: boolean): void {
    const sockets = this.viewers.get(notebookId);
    if (!sockets?.has(socketId) || sockets.get(socketId) === visible) return;
    sockets.set(socketId, visible);
    if (!visible) this.lastViewerLeftAt.set(notebookId, this.clock());
  }

  /** Viewers whose tab is visible. */
  viewerCount(notebookId: string): number {
    let visible = 0;
    for (const shown of this.viewers.get(notebookId)?.values() ?? []) if (shown) visible += 1;
    return visible;
  }

  /** Takes a GPU measurement of every live kernel: one busier than the threshold is in use now. */
  noteGpuUse(): void {
    const now = this.clock();
    const threshold = this.limits.gpuBusyPercent ?? 5;
    for (const tracked of this.tracked.values()) {
      const placement = tracked.owner.kernel.placement;
      if (!placement || !isLive(tracked.owner.kernel.status.state)) continue;
      const utilization = this.gpuUtilizationOf(placement);
      if (utilization !== null && utilization > threshold) tracked.gpuBusyAt = now;
    }
  }

  /** Tells the notebook when its kernel will be shut down, once per idle period; `shutdownAt` null clears a warning. */
  warn(notebookId: string, shutdownAt: number | null): void {
    const tracked = this.tracked.get(notebookId);
    if (!tracked || tracked.warnedOf === shutdownAt) return;
    tracked.warnedOf = shutdownAt;
    tracked.owner.warnIdle(shutdownAt);
  }

  /**
   * A place under the cap for a kernel this notebook is about to start, held
   * until the returned release (by then the kernel counts as live itself).
   * Throws, with what to do, at the cap.
   */
  claim(notebookId: string): () => void {
    const tracked = this.tracked.get(notebookId);
    if (!tracked) throw new Error(`notebook ${notebookId} is not open`);
    let live = 0;
    let idle = 0;
    for (const [id, other] of this.tracked) {
      if (id === notebookId) continue;
      const state = other.owner.kernel.status.state;
      if (isLive(state) || other.claims > 0) live += 1;
      if (state === "idle" && other.owner.kernel.pendingExecutions === 0) idle += 1;
    }
    const admission = admitKernel(live, idle, this.limits.maxKernels);
    if (!admission.ok) throw new CommandError("limit", admission.reason);
    tracked.claims += 1;
    let released = false;
    return () => {
      if (!released) tracked.claims -= 1;
      released = true;
    };
  }

  /** Notebooks with a kernel process not already being shut down, with what idle shutdown needs to know of each. */
  *live(): Iterable<[string, KernelFacts]> {
    for (const [notebookId, tracked] of this.tracked) {
      if (tracked.stopping) continue;
      const facts = this.factsOf(notebookId, tracked);
      if (isLive(facts.state)) yield [notebookId, facts];
    }
  }

  /** Every tracked kernel's state and host, as the operator's metrics count them (server/metrics). */
  *states(): Iterable<{ notebookId: string; state: KernelStatus["state"]; hostId: string | null; queued: boolean }> {
    for (const [notebookId, tracked] of this.tracked) {
      const { status, placement } = tracked.owner.kernel;
      const queued = status.state === "starting" && status.queue !== undefined;
      yield { notebookId, state: status.state, hostId: placement?.hostId ?? tracked.owner.doc.kernelSpec?.hostId ?? null, queued };
    }
  }

  /** Ends a notebook's kernel; a second call while it ends waits for the same shutdown. False when none was running. */
  async shutdown(notebookId: string, reason: string): Promise<boolean> {
    const tracked = this.tracked.get(notebookId);
    if (!tracked) return false;
    if (tracked.stopping) {
      await tracked.stopping;
      return true;
    }
    if (!isLive(tracked.owner.kernel.status.state)) return false;
    tracked.stopping = tracked.owner.kernel.shutdown(reason).finally(() => {
      tracked.stopping = null;
    });
    await tracked.stopping;
    return true;
  }

  async shutdownAll(reason: string): Promise<number> {
    const ended = await Promise.all([...this.live()].map(([notebookId]) => this.shutdown(notebookId, reason)));
    return ended.filter(Boolean).length;
  }

  /** What the Running kernels view shows; memory from one scan of /proc. */
  async list(): Promise<RunningKernels> {
    const now = this.clock();
    const table = await ProcessTable.read();
    const rows = await Promise.all([...this.tracked].map(([notebookId, tracked]) => this.describe(notebookId, tracked, now, table)));
    const kernels = rows.filter((row): row is RunningKernel => row !== null);
    kernels.sort((a, b) => a.title.localeCompare(b.title) || a.notebookId.localeCompare(b.notebookId));
    return { kernels, maxKernels: this.limits.maxKernels, idleShutdownMs: this.limits.idleShutdownMs, memoryMethod: MEMORY_METHOD };
  }

  private async describe(notebookId: string, tracked: Tracked, now: number, table: ProcessTable | null): Promise<RunningKernel | null> {
    const facts = this.factsOf(notebookId, tracked);
    const state = facts.state;
    if (!isLive(state)) return null;
    const pid = tracked.owner.kernel.pid;
    // A kernel on another host has a pid there, not in this machine's /proc.
    const local = tracked.owner.kernel.placement?.onThisMachine ?? true;
    const memory = pid === null || table === null || !local ? null : await table.memoryOf(pid);
    const decision = cullDecision(kernelUse(facts), now, this.limits.idleShutdownMs);
    const shutdownAt = decision.action === "keep" || decision.action === "warn" ? decision.shutdownAt : null;
    return {
      notebookId,
      title: tracked.owner.doc.title,
      state,
      pid,
      startedAt: new Date(tracked.startedAt).toISOString(),
      lastActivityAt: new Date(tracked.lastActivityAt).toISOString(),
      viewers: facts.viewers,
      executions: facts.executions,
      memory: memory === null ? null : { rssBytes: memory.rssBytes, processes: memory.pids.length },
      idleShutdownAt: shutdownAt !== null ? new Date(shutdownAt).toISOString() : null,
    };
  }

  private factsOf(notebookId: string, tracked: Tracked): KernelFacts {
    return {
      state: tracked.owner.kernel.status.state,
      executions: tracked.owner.kernel.pendingExecutions,
      viewers: this.viewerCount(notebookId),
      lastActivityAt: tracked.lastActivityAt,
      lastViewerLeftAt: this.lastViewerLeftAt.get(notebookId) ?? null,
      gpuBusyAt: tracked.gpuBusyAt,
    };
  }
}
