/** Small pure formatters shared by the components. */
import type { Cell, KernelInfo } from "../../../server/core/protocol/notebook-model";

const BYTE_UNITS = ["bytes", "kB", "MB", "GB", "TB"] as const;

/** 98_200_000 → "98.2 MB" (SI units, as file sizes are usually shown). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "? bytes";
  if (bytes < 1000) return `${Math.round(bytes)} ${bytes === 1 ? "byte" : "bytes"}`;
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

/** 5 → "5 ms", 1234 → "1.23 s", 125_000 → "2 min 5 s", 3_720_000 → "1 h 2 min". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds} s`;
}

/** How long a run made no progress: "62 s" up to two minutes, then "3 min 5 s". */
export function formatIdle(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : formatDuration(ms);
}

/**
 * "just now", "3 min ago", "2 h ago", "yesterday", "5 days ago", then the
 * date: when a notebook was last changed, relative to `now`.
 */
export function formatRelativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "unknown";
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days === 1) return "yesterday";
  if (days < 30) return `${days} days ago`;
  return new Date(then).toISOString().slice(0, 10);
}

/** The Jupyter prompt: "[ ]" never run, "[*]" queued or running, "[n]" last execution count. */
export function promptLabel(cell: Pick<Cell, "runState" | "executionCount">): string {
  if (cell.runState !== "idle") return "[*]";
  return cell.executionCount === null ? "[ ]" : `[${cell.executionCount}]`;
}

const RUN_STATUS_TEXT: Record<NonNullable<Cell["lastRun"]>["status"], string> = {
  ok: "ok",
  error: "error",
  interrupted: "interrupted",
  aborted: "not run (an earlier cell failed or was interrupted)",
  "kernel-died": "kernel died",
  "no-kernel": "not run: the kernel did not start (its status says why)",
};

export function lastRunLabel(lastRun: NonNullable<Cell["lastRun"]>): string {
  return `${RUN_STATUS_TEXT[lastRun.status]} · ${formatDuration(lastRun.durationMs)}`;
}

/**
 * What the kernel's devices really are, said plainly: "CPU" unless the
 * kernel reported CUDA devices (a "no CUDA" mode is CPU).
 */
export function deviceSummary(info: KernelInfo): { kind: "CPU" | "GPU"; text: string } {
  const mode = info.deviceMode;
  const gpu = /cuda|gpu/i.test(mode) && !/no\s+cuda|without\s+cuda|cpu/i.test(mode);
  return { kind: gpu ? "GPU" : "CPU", text: mode };
}

export function kernelDetails(info: KernelInfo): string {
  return [
    ...(info.host ? [`On ${info.host.label} (host ${info.host.id})`] : []),
    ...(info.gpus && info.gpus.length > 0 ? [`Leased GPUs: ${info.gpus.join(", ")}`] : []),
    `Devices: ${info.deviceMode}`,
    `Python ${info.python} (${info.executable})`,
    `torch ${info.torch ?? "not installed"}`,
    `host ${info.hostname}, pid ${info.pid}`,
  ].join("\n");
}

/** "10:02" (or "10:02:13" with seconds): a time on the viewer's clock. */
export function formatClock(epochMs: number, { seconds = false }: { seconds?: boolean } = {}): string {
  const date = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(date.getHours())}:${two(date.getMinutes())}${seconds ? `:${two(date.getSeconds())}` : ""}`;
}
