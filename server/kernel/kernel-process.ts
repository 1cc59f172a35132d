/**
 * What a KernelSession needs of a running kernel, wherever it runs: a kernel
 * on its own local PTY (kernel-channel.ts), or one that a host agent owns
 * (hosts/agent-kernel.ts). A launcher starts one; an agent's launcher can
 * also take over one that outlived the previous lab server.
 */
import type { KernelMessage, KernelMessageOf, KernelRequest } from "../core/protocol/kernel-messages";
import type { GpuWaitView, KernelLinkTrouble } from "../core/protocol/notebook-model";

export interface KernelExit {
  exitCode: number | null;
  /** The signal number that ended the process, if a signal did. */
  signal: number | null;
  /** In words, when whoever ended it said why ("lease expired: …"). */
  reason?: string;
}

export interface KernelProcessEvents {
  message(message: KernelMessage): void;
  /** Raw tty output outside frames: the running cell's console (stdout, child processes). */
  console(text: string): void;
  /** A frame that could not be decoded or validated: logged, never fatal. */
  protocolError(reason: string): void;
  exit(exit: KernelExit): void;
}

export interface KernelProcess {
  readonly pid: number;
  readonly alive: boolean;
  send(request: KernelRequest): void;
  /** Stop the running cell (Ctrl-C semantics). */
  interrupt(): void;
  /** Every process of the kernel prints its Python stacks on the console. */
  requestStacks(): void;
  /** Asks the kernel to end, then ends it; resolves once it is gone. */
  shutdown(graceMs?: number): Promise<void>;
  kill(): Promise<void>;
  /**
   * The position in the kernel's output sequence up to which every message
   * has been handed to the events (host agents number them; a local PTY does not: 0).
   */
  readonly processedSeq: number;
  /** Everything up to `seq` is stored: the host may drop it. */
  acknowledge(seq: number): void;
  /** Where it runs and with what, for the notebook header ("GPU 0, 1 of gpu1"). */
  readonly placement: KernelPlacement;
  /** A kernel behind a link (a host agent's) hears when the link stops answering, and null once it answers again. */
  onLinkTrouble?(listener: (trouble: KernelLinkTrouble | null) => void): () => void;
}

export interface KernelPlacement {
  hostId: string;
  /** The kernel's id on its host agent; null for a kernel on its own local PTY. */
  agentKernelId: string | null;
  /** UUIDs of the GPUs leased to it (its CUDA_VISIBLE_DEVICES). */
  gpus: string[];
  /** It runs on the lab server's machine (its pid can be looked up in this /proc). */
  onThisMachine: boolean;
}

export interface KernelStartOptions {
  startTimeoutMs?: number;
  cwd?: string;
  /** GPUs the kernel asks for (leased on hosts that declare slots). */
  gpus?: number;
  /** While the kernel waits for GPUs: its place in the host's queue, its id there, and what it waits for. */
  onQueued?: (queue: KernelQueued) => void;
  /** Aborted when the start is given up (a shutdown while it waits for GPUs): the host drops it. */
  signal?: AbortSignal;
  /** The notebook asking: who holds the GPUs it waits for is named as its owner may see them. */
  notebookId?: string;
}

export interface KernelQueued {
  position: number;
  /** Its id on the host agent (the hosts page names the notebook waiting by it). */
  agentKernelId: string;
  wait: GpuWaitView | null;
}

/**
 * The host has no GPUs for the kernel now (it refuses when full, or has
 * fewer than asked). Nothing was started and nothing died: the kernel waits
 * for the user to try again (README "GPU hosts").
 */
export class KernelRefusedError extends Error {
  constructor(
    message: string,
    readonly wait: GpuWaitView,
  ) {
    super(message);
  }
}

export interface KernelLauncher {
  readonly id: string;
  readonly label: string;
  /** Which interpreter and where, and why: shown to the user. */
  describe(): string;
  start(events: KernelProcessEvents, options: KernelStartOptions): Promise<{ process: KernelProcess; hello: KernelMessageOf<"hello"> }>;
  /** Takes over a kernel that outlived the previous lab server, replaying its output after `afterSeq`; null when it is gone. */
  resume?(agentKernelId: string, afterSeq: number, events: KernelProcessEvents): Promise<KernelProcess | null>;
}

export function describeKernelExit(exit: KernelExit, prefix = "kernel exited"): string {
  if (exit.reason) return `${prefix}: ${exit.reason}`;
  if (exit.signal) return `${prefix}: killed by ${signalName(exit.signal)}`;
  return `${prefix} with code ${exit.exitCode ?? "unknown"}`;
}

function signalName(signal: number): string {
  const names: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL (e.g. out of memory, or killed)", 11: "SIGSEGV (segmentation fault)", 15: "SIGTERM" };
  return names[signal] ?? `signal ${signal}`;
}
