/**
 * The Running kernels view: every live kernel of the lab, refreshed while
 * the page is open, with shutdown of one or all. Components read the state
 * through `subscribe`/`getState`; what each row says is computed here by
 * pure functions, so the page only renders.
 */
import { describePeriod, type KernelListing, type ListedKernel } from "../../../server/core/protocol/kernels-model";
import { formatBytes, formatDuration, formatRelativeTime } from "../../shell/model/format";
import type { LabTransport } from "../../shell/model/lab-client";
import type { LabReply, LabSend } from "../../../server/core/protocol/ops-lab";
import { PolledPage } from "../../shell/model/polling-store";
import { assertNever } from "../../../server/core/assert-never";

export interface RunningKernelsState {
  status: "loading" | "ready" | "error";
  listing: KernelListing | null;
  /** The last thing that went wrong, shown until dismissed or the next good answer. */
  error: string | null;
  /** Notebook ids whose kernel is being shut down (their buttons are disabled). */
  stopping: readonly string[];
}

export interface RunningKernelsOptions {
  /** How often the list is refreshed while the page is open (ms). */
  pollMs?: number;
  /** Asked before "Shut down all"; false keeps them. */
  confirm?: (question: string) => boolean;
}

type ListReply = LabReply<"list-kernels">;

export class RunningKernelsController extends PolledPage<RunningKernelsState, ListReply> {
  private readonly confirm: (question: string) => boolean;

  constructor(
    private readonly transport: LabTransport,
    options: RunningKernelsOptions = {},
  ) {
    super(
      transport,
      { status: "loading", listing: null, error: null, stopping: [] },
      { what: "Loading the kernels", fetch: () => transport.send({ op: "list-kernels" }), apply: (reply) => ({ listing: reply.kernels, error: null }), pollMs: options.pollMs ?? 3_000 },
    );
    this.confirm = options.confirm ?? (() => true);
  }

  /** By its notebook when the viewer may name it, else by its opaque ref (an admin's list of everyone's). */
  async shutdown(kernel: ListedKernel): Promise<boolean> {
    const ref = kernel.kernelRef;
    this.store.update({ stopping: [...this.getState().stopping, ref] });
    const command = kernel.notebookId !== null ? { op: "shutdown-kernel" as const, notebookId: kernel.notebookId } : { op: "shutdown-listed-kernel" as const, kernelRef: ref };
    const ok = await this.act(command, "Shutting the kernel down");
    this.store.update({ stopping: this.getState().stopping.filter((id) => id !== ref) });
    return ok;
  }

  /** Asks first (their variables are lost); false when the user kept them or the server refused. */
  async shutdownAll(): Promise<boolean> {
    const kernels = this.getState().listing?.kernels ?? [];
    if (kernels.length === 0 || !this.confirm(shutdownAllQuestion(kernels))) return false;
    const ids = kernels.map((kernel) => kernel.kernelRef);
    this.store.update({ stopping: [...this.getState().stopping, ...ids] });
    const ok = await this.act({ op: "shutdown-all-kernels" }, "Shutting the kernels down");
    this.store.update({ stopping: this.getState().stopping.filter((id) => !ids.includes(id)) });
    return ok;
  }


  /** A shutdown answers with the listing after it: fresher than any list asked before. */
  private async act<Op extends "shutdown-kernel" | "shutdown-listed-kernel" | "shutdown-all-kernels">(command: LabSend<Op>, what: string): Promise<boolean> {
    const ack = await this.transport.send(command);
    this.store.supersede();
    if (!ack.ok) {
      this.store.fail(what, ack);
      return false;
    }
    this.store.update({ status: "ready", listing: ack.kernels });
    return true;
  }
}

/** One row of the table, in words. */
export interface KernelRow {
  kernelRef: string;
  title: string;
  /** Null: a notebook the viewer may not open (named by its owner only). */
  href: string | null;
  state: ListedKernel["state"];
  stateLabel: string;
  started: string;
  lastActivity: string;
  viewers: string;
  memory: string;
  idleShutdown: string;
}

export function kernelRow(kernel: ListedKernel, now: number): KernelRow {
  return {
    kernelRef: kernel.kernelRef,
    title: kernel.title,
    href: kernel.notebookId === null ? null : `/notebooks/${encodeURIComponent(kernel.notebookId)}`,
    state: kernel.state,
    stateLabel: stateLabel(kernel),
    started: formatRelativeTime(kernel.startedAt, now),
    lastActivity: formatRelativeTime(kernel.lastActivityAt, now),
    viewers: kernel.viewers === 0 ? "nobody" : `${kernel.viewers} ${kernel.viewers === 1 ? "tab" : "tabs"}`,
    memory: memoryLabel(kernel.memory),
    idleShutdown: idleShutdownLabel(kernel, now),
  };
}

function stateLabel(kernel: ListedKernel): string {
  switch (kernel.state) {
    case "starting":
      return "starting…";
    case "idle":
      return "idle";
    case "busy":
      return kernel.executions > 1 ? `busy (${kernel.executions - 1} queued)` : "busy";
    case "interrupting":
      return "interrupting…";
    case "restarting":
      return "restarting…";
    default:
      return assertNever(kernel.state);
  }
}

function memoryLabel(memory: ListedKernel["memory"]): string {
  if (memory === null) return "not measured";
  return `${formatBytes(memory.rssBytes)}${memory.processes > 1 ? ` in ${memory.processes} processes` : ""}`;
}

function idleShutdownLabel(kernel: ListedKernel, now: number): string {
  if (kernel.idleShutdownAt === null) return kernel.viewers > 0 || kernel.executions > 0 ? "in use" : "—";
  const left = Date.parse(kernel.idleShutdownAt) - now;
  return left <= 0 ? "due now" : `in ${formatDuration(left)} if unused`;
}

/** "2 of at most 16 kernels · 1.2 GB · unused kernels shut down after 60 min". */
export function summaryLine(listing: KernelListing): string {
  const count = listing.kernels.length;
  const measured = listing.kernels.map((kernel) => kernel.memory?.rssBytes ?? 0).reduce((sum, bytes) => sum + bytes, 0);
  const idle = listing.idleShutdownMs === null ? "idle shutdown is off" : `unused kernels shut down after ${describePeriod(listing.idleShutdownMs)}`;
  return `${count} of at most ${listing.maxKernels} ${listing.maxKernels === 1 ? "kernel" : "kernels"} · ${formatBytes(measured)} · ${idle}`;
}

export function shutdownAllQuestion(kernels: readonly ListedKernel[]): string {
  const busy = kernels.filter((kernel) => kernel.executions > 0).length;
  const viewed = kernels.filter((kernel) => kernel.viewers > 0).length;
  const notes = [busy > 0 ? `${busy} running a cell` : null, viewed > 0 ? `${viewed} open in a tab` : null].filter((note) => note !== null);
  return `Shut down all ${kernels.length} ${kernels.length === 1 ? "kernel" : "kernels"}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}? Their variables are lost; the notebooks stay as they are.`;
}
