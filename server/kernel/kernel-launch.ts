/**
 * Where and how a kernel session starts its kernels: the launch (host, GPUs,
 * the notebook asking) read at each start, the session's other settings,
 * and what a started kernel said of itself in the words the notebook shows.
 * Separate from KernelSession: what a start is given and what it found,
 * not the lifecycle that uses them.
 */
import type { KernelInfo } from "../core/protocol/notebook-model";
import type { KernelMessageOf } from "../core/protocol/kernel-messages";
import type { KernelLauncher, KernelPlacement } from "./kernel-process";
import type { Log } from "../logger";

/** Where a kernel starts and how many GPUs it asks its host for. */
export interface KernelLaunch {
  host: KernelLauncher;
  gpus: number;
  /** The notebook asking (the holders of GPUs it waits for are named as its owner may see them). */
  notebookId?: string;
}

export interface KernelSessionOptions {
  /**
   * Read at each start, so a notebook's kernel spec applies at the next
   * (re)start; a throw (a host no longer configured) fails that start with its message.
   */
  launch: () => KernelLaunch;
  startTimeoutMs?: number;
  cwd?: string;
  /** A busy cell with no output, metric or heartbeat for this long is diagnosed (default 120 s). */
  hangAfterMs?: number;
  /** Metric points, whichever cell they come from. */
  onMetric?: (message: KernelMessageOf<"metric">) => void;
  /** The devices a run (metric tag) ran on, as the toolkit planned them. */
  onDevicePlan?: (message: KernelMessageOf<"device_plan">) => void;
  onLog?: Log;
  /** Modules the kernel imports in the background once it has started (read at each start; empty: none). */
  preload?: () => readonly string[];
}

export function describeKernel(hello: KernelMessageOf<"hello">, placement?: KernelPlacement, hostLabel?: string): KernelInfo {
  const deviceMode = hello.cudaDevices > 0
    ? `${hello.cudaDevices}× CUDA GPU`
    : "CPU only (no CUDA): multi-GPU experiments run on emulated CPU devices";
  return {
    ...(placement ? { host: { id: placement.hostId, label: hostLabel ?? placement.hostId }, gpus: placement.gpus } : {}),
    pid: hello.pid,
    hostname: hello.hostname,
    python: hello.python,
    executable: hello.executable,
    torch: hello.torch,
    deviceMode,
  };
}
